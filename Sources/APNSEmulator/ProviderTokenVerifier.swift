import APNSCore
import BeckonJSON
import Crypto
import Foundation

/// What a provider token says once its signature checked out.
struct VerifiedProviderToken: Sendable, Hashable {
    var keyID: String
    var teamID: String
    var issuedAt: Date
}

/// Checks a JWT the way APNs does (apns.md B.1): ES256 only, a known `kid`, a valid signature,
/// `iss` equal to the key's team, and an `iat`. Age is checked per request by the caller, since
/// a cached token keeps ageing.
enum TokenCheck: Sendable, Hashable {
    case valid(VerifiedProviderToken)
    case invalid(APNSReason)
}

struct ProviderTokenVerifier: Sendable {
    let keys: [String: APNSEmulatorAuthKey]
    let acceptStringIssuedAt: Bool

    init(keys: [APNSEmulatorAuthKey], acceptStringIssuedAt: Bool) {
        var byID: [String: APNSEmulatorAuthKey] = [:]
        for key in keys { byID[key.keyID] = key }
        self.keys = byID
        self.acceptStringIssuedAt = acceptStringIssuedAt
    }

    /// `token` is the text after `bearer `.
    func verify(_ token: Substring) -> TokenCheck {
        let parts = token.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3,
            let headerBytes = Base64URL.decode(parts[0]),
            let claimsBytes = Base64URL.decode(parts[1]),
            let signatureBytes = Base64URL.decode(parts[2]),
            case .object(let header)? = try? JSONParser.parse(headerBytes),
            case .object(let claims)? = try? JSONParser.parse(claimsBytes)
        else { return .invalid(.invalidProviderToken) }

        // "Unsecured JWTs, or JWTs signed with other algorithms, are rejected" (AP-TOKEN).
        guard header["alg"]?.stringValue == "ES256" else { return .invalid(.invalidProviderToken) }
        guard let keyID = header["kid"]?.stringValue, let key = keys[keyID] else {
            return .invalid(.invalidProviderToken)
        }
        guard signatureBytes.count == 64,
            let signature = try? P256.Signing.ECDSASignature(rawRepresentation: signatureBytes),
            let publicKey = try? P256.Signing.PublicKey(x963Representation: key.publicKeyX963)
        else { return .invalid(.invalidProviderToken) }
        let signingInput = Data(token.utf8.prefix(parts[0].utf8.count + 1 + parts[1].utf8.count))
        guard publicKey.isValidSignature(signature, for: signingInput) else {
            return .invalid(.invalidProviderToken)
        }
        guard let issuer = claims["iss"]?.stringValue, issuer == key.teamID else {
            return .invalid(.invalidProviderToken)
        }
        guard let issuedAt = issuedAt(claims["iat"]) else { return .invalid(.invalidProviderToken) }
        return .valid(VerifiedProviderToken(keyID: keyID, teamID: issuer, issuedAt: issuedAt))
    }

    private func issuedAt(_ value: JSONValue?) -> Date? {
        switch value {
        case .string(let string)?:
            // Apple's own sample has a string in milliseconds; APNSwift sends seconds as a string.
            guard acceptStringIssuedAt, let number = Int64(string) else { return nil }
            return Date(timeIntervalSince1970: TimeInterval(number > 100_000_000_000 ? number / 1000 : number))
        case .int(let seconds)? where seconds > 0:
            return Date(timeIntervalSince1970: TimeInterval(seconds))
        case .double(let seconds)? where seconds.rounded() == seconds && seconds > 0:
            return Date(timeIntervalSince1970: seconds)
        default:
            return nil
        }
    }
}
