import APNSCore
import Crypto
import Foundation

/// Secrets Beckon hands out (API keys, device credentials) and how they are checked.
///
/// A secret reads `<kind>_<id>_<random>`. The id is random too, unique, and indexed, so a
/// presented secret is found without comparing it against every stored hash; only the SHA-256 of
/// the whole text is stored, and it is compared in constant time. 256 bits of randomness make
/// a salted or slow hash unnecessary: there is nothing to guess offline.
enum SecretToken {
    static let apiKeyPrefix = "bk"
    static let deviceCredentialPrefix = "bkd"

    struct Issued {
        var id: String
        var text: String
        var hash: Data
    }

    struct Parsed {
        var kind: String
        var id: String
    }

    static func issue(kind: String) -> Issued {
        let id = randomString(byteCount: 9)
        let text = "\(kind)_\(id)_\(randomString(byteCount: 32))"
        return Issued(id: id, text: text, hash: hash(text))
    }

    static func hash(_ text: String) -> Data {
        Data(SHA256.hash(data: Data(text.utf8)))
    }

    /// Splits a presented secret; nil if it cannot be one of ours (so no lookup is made).
    static func parse(_ text: String, kind: String) -> Parsed? {
        guard text.count < 256 else { return nil }
        let parts = text.split(separator: "_", omittingEmptySubsequences: false)
        guard parts.count == 3, parts[0] == kind, !parts[1].isEmpty, !parts[2].isEmpty else { return nil }
        return Parsed(kind: kind, id: String(parts[1]))
    }

    /// Whether a presented secret matches a stored hash, in time independent of where they differ.
    static func matches(_ presented: String, storedHash: Data) -> Bool {
        constantTimeEquals(hash(presented), storedHash)
    }

    static func constantTimeEquals(_ a: Data, _ b: Data) -> Bool {
        guard a.count == b.count else { return false }
        var difference: UInt8 = 0
        for (x, y) in zip(a, b) {
            difference |= x ^ y
        }
        return difference == 0
    }

    /// Base64 with `-` and `.` for `+` and `/`, unpadded: safe in a header or URL, and free of
    /// `_`, the separator.
    private static func randomString(byteCount: Int) -> String {
        var generator = SystemRandomNumberGenerator()  // getrandom(2) on Linux, a CSPRNG
        let bytes = (0..<byteCount).map { _ in UInt8.random(in: .min ... .max, using: &generator) }
        return Base64URL.encode(bytes, symbols: .init("-", "."))
    }
}
