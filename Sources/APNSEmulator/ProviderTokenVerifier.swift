import APNSCore
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
            let header = (try? JSONSerialization.jsonObject(with: Data(headerBytes))) as? [String: Any],
            let claims = (try? JSONSerialization.jsonObject(with: Data(claimsBytes))) as? [String: Any]
        else { return .invalid(.invalidProviderToken) }

        // "Unsecured JWTs, or JWTs signed with other algorithms, are rejected" (AP-TOKEN).
        guard header["alg"] as? String == "ES256" else { return .invalid(.invalidProviderToken) }
        guard let keyID = header["kid"] as? String, let key = keys[keyID] else {
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
        guard let issuer = claims["iss"] as? String, issuer == key.teamID else {
            return .invalid(.invalidProviderToken)
        }
        guard let issuedAt = issuedAt(claims["iat"]) else { return .invalid(.invalidProviderToken) }
        return .valid(VerifiedProviderToken(keyID: keyID, teamID: issuer, issuedAt: issuedAt))
    }

    private func issuedAt(_ value: Any?) -> Date? {
        switch value {
        case let string as String:
            // Apple's own sample has a string in milliseconds; APNSwift sends seconds as a string.
            guard acceptStringIssuedAt, let number = Int64(string) else { return nil }
            return Date(timeIntervalSince1970: TimeInterval(number > 100_000_000_000 ? number / 1000 : number))
        case let number as NSNumber:
            // JSONSerialization hands out NSNumber; a Bool would also arrive here, so reject it.
            if CFGetTypeIDIfAvailable(number) { return nil }
            let double = number.doubleValue
            guard double.rounded() == double, double > 0 else { return nil }
            return Date(timeIntervalSince1970: double)
        default:
            return nil
        }
    }
}

@inline(__always)
private func CFGetTypeIDIfAvailable(_ number: NSNumber) -> Bool {
    // `true`/`false` decode as NSNumber too; their objCType is "c" (char) on Darwin and Linux.
    String(cString: number.objCType) == "c"
}
