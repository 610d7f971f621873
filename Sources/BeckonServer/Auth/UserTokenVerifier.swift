import APNSCore
import BeckonJSON
import Crypto
import Foundation

/// Checks the short-lived user tokens an app's backend signs, with which an app on a phone
/// registers itself as a device of that user.
///
/// A user token is a JWT (RFC 7519) in compact JWS form, signed with HS256 (RFC 7518 §3.2)
/// using the app's `user-token-secret`. Claims: `aud` is the app id (a string, or an array
/// holding it), `sub` the user id, `exp` required; `nbf` honoured if present. Clock skew of
/// `leeway` is allowed both ways (RFC 7519 §4.1.4 leaves the margin to the verifier).
struct UserTokenVerifier: Sendable {
    struct Verified: Equatable {
        var appID: String
        var userID: String
    }

    /// Secrets by app id (as bytes: `SymmetricKey` is not `Sendable`).
    let secrets: [String: Data]
    let leeway: TimeInterval

    init(apps: [AppDeclaration], leeway: TimeInterval = 60) {
        var secrets: [String: Data] = [:]
        for app in apps {
            secrets[app.id] = Data(app.userTokenSecret.utf8)
        }
        self.secrets = secrets
        self.leeway = leeway
    }

    func verify(_ token: String, now: Date) throws(APIError) -> Verified {
        let parts = token.split(separator: ".", omittingEmptySubsequences: false)
        guard token.utf8.count <= 8192, parts.count == 3,
            // Unpadded only: JWS never pads (RFC 7515 §2).
            let headerBytes = Base64URL.decode(parts[0]),
            let payloadBytes = Base64URL.decode(parts[1]),
            let signature = Base64URL.decode(parts[2])
        else { throw .unauthorized("the user token is not a JWT") }
        guard case .object(let header) = try? APIJSON.parse(headerBytes),
            case .object(let claims) = try? APIJSON.parse(payloadBytes)
        else { throw .unauthorized("the user token is not a JWT") }
        // Only HS256: accepting the header's choice would let "none" or a confused algorithm
        // through (RFC 8725 §3.1, "Perform Algorithm Verification").
        guard header["alg"] == .string("HS256") else { throw .unauthorized("the user token must be signed with HS256") }

        // `aud` picks the secret; nothing in the claims is trusted until the signature checks.
        let audiences: [String]
        switch claims["aud"] {
        case .string(let audience): audiences = [audience]
        case .array(let items): audiences = items.compactMap { if case .string(let s) = $0 { s } else { nil } }
        default: throw .unauthorized("the user token has no aud (the app id)")
        }
        guard let appID = audiences.first(where: { secrets[$0] != nil }), let key = secrets[appID] else {
            throw .unauthorized("the user token's aud is not an app of this server")
        }
        let signingInput = Data(token.utf8.prefix(parts[0].utf8.count + 1 + parts[1].utf8.count))
        // isValidAuthenticationCode compares in constant time.
        guard HMAC<SHA256>.isValidAuthenticationCode(signature, authenticating: signingInput, using: SymmetricKey(data: key)) else {
            throw .unauthorized("the user token's signature does not verify with the key of app \(appID)")
        }

        guard let exp = Self.seconds(claims["exp"]) else { throw .unauthorized("the user token has no exp") }
        let nowSeconds = now.timeIntervalSince1970
        guard nowSeconds <= exp + leeway else { throw .unauthorized("the user token has expired") }
        if let nbf = Self.seconds(claims["nbf"]), nowSeconds + leeway < nbf {
            throw .unauthorized("the user token is not valid yet (nbf)")
        }
        guard case .string(let userID) = claims["sub"] else { throw .unauthorized("the user token has no sub (the user id)") }
        if let problem = Identifier.problem(userID) { throw .unauthorized("the user token's sub (the user id) \(problem)") }
        return Verified(appID: appID, userID: userID)
    }

    /// A NumericDate (RFC 7519 §2): seconds since 1970, integer or not.
    private static func seconds(_ value: JSONValue?) -> Double? {
        switch value {
        case .int(let n): Double(n)
        case .double(let n): n
        default: nil
        }
    }
}
