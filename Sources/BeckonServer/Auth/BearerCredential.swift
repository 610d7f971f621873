import Foundation

/// The secret in `Authorization: Bearer <secret>` (RFC 6750 §2.1), told apart by its prefix:
/// `bk_` is an app API key, `bkd_` a device credential, anything else may be a user token (JWT)
/// or the admin token.
enum BearerCredential: Equatable {
    case apiKey(String)
    case device(String)
    case other(String)

    /// Nil if the `Authorization` header holds no bearer credential.
    init?(authorization header: String?) {
        guard let header else { return nil }
        let parts = header.split(separator: " ", maxSplits: 1, omittingEmptySubsequences: true)
        // The scheme is case-insensitive (RFC 9110 §11.1).
        guard parts.count == 2, parts[0].lowercasedASCII() == "bearer" else { return nil }
        let secret = parts[1].trimmingOptionalWhitespace()
        guard !secret.isEmpty else { return nil }
        if secret.hasPrefix("bkd_") {
            self = .device(String(secret))
        } else if secret.hasPrefix("bk_") {
            self = .apiKey(String(secret))
        } else {
            self = .other(String(secret))
        }
    }
}
