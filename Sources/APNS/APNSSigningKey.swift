import APNSCore
@preconcurrency import Crypto
import Foundation

/// An Apple push key (the `.p8` file) with the ids a provider token names.
public struct APNSSigningKey: Sendable {
    public let teamID: String
    public let keyID: String
    public let privateKey: P256.Signing.PrivateKey

    public init(teamID: String, keyID: String, privateKey: P256.Signing.PrivateKey) {
        self.teamID = teamID
        self.keyID = keyID
        self.privateKey = privateKey
    }

    /// Reads the PKCS#8 PEM that Apple's developer portal hands out.
    public init(teamID: String, keyID: String, pem: String) throws {
        self.init(teamID: teamID, keyID: keyID, privateKey: try P256.Signing.PrivateKey(pemRepresentation: pem))
    }

    public init(teamID: String, keyID: String, pemFile path: String) throws {
        try self.init(teamID: teamID, keyID: keyID, pem: String(contentsOfFile: path, encoding: .utf8))
    }

    /// Mints a provider token (apns.md B.1): ES256, header `{"alg","kid"}`, claims `{"iss","iat"}`,
    /// `iat` in whole seconds as a JSON number.
    public func providerToken(issuedAt: Date) throws -> String {
        let header = #"{"alg":"ES256","kid":"\#(keyID)"}"#
        let claims = #"{"iss":"\#(teamID)","iat":\#(Int(issuedAt.timeIntervalSince1970))}"#
        let signingInput = Base64URL.encode(Array(header.utf8)) + "." + Base64URL.encode(Array(claims.utf8))
        let signature = try privateKey.signature(for: Data(signingInput.utf8))
        // JWS ES256 signatures are the raw 64-byte r||s, not DER (RFC 7518 §3.4).
        return signingInput + "." + Base64URL.encode(signature.rawRepresentation)
    }
}
