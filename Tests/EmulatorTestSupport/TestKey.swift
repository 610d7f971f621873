import APNSCore
import APNSEmulator
import Crypto
import Foundation

/// A provider key and its tokens.
public struct TestKey: Sendable {
    public let keyID: String
    public let teamID: String
    public let privateKeyRaw: Data

    public init(keyID: String = "KEY1234567", teamID: String = "TEAM123456") {
        self.keyID = keyID
        self.teamID = teamID
        privateKeyRaw = P256.Signing.PrivateKey().rawRepresentation
    }

    public var privateKey: P256.Signing.PrivateKey { try! .init(rawRepresentation: privateKeyRaw) }

    public func authKey(environment: APNSEnvironment? = nil, bundleIDs: Set<String>? = nil, relatedKeyID: String? = nil) -> APNSEmulatorAuthKey {
        APNSEmulatorAuthKey(keyID: keyID, teamID: teamID, publicKey: privateKey.publicKey,
                            environment: environment, bundleIDs: bundleIDs, relatedKeyID: relatedKeyID)
    }

    public func token(issuedAt: Date = Date(), alg: String = "ES256", kid: String? = nil, iss: String? = nil, iatJSON: String? = nil) -> String {
        let header = Base64URL.encode(Array(#"{"alg":"\#(alg)","kid":"\#(kid ?? keyID)"}"#.utf8))
        let iat = iatJSON ?? String(Int(issuedAt.timeIntervalSince1970))
        let claims = Base64URL.encode(Array(#"{"iss":"\#(iss ?? teamID)","iat":\#(iat)}"#.utf8))
        let input = header + "." + claims
        let signature = try! privateKey.signature(for: Data(input.utf8)).rawRepresentation
        return input + "." + Base64URL.encode(signature)
    }
}
