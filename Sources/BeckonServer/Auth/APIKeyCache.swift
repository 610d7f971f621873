import BeckonStore
import Crypto
import Foundation
import NIOConcurrencyHelpers

/// Recently authenticated API keys, so a backend posting thousands of messages a second does not
/// cost a database read per request. Entries are keyed by the SHA-256 of the presented secret
/// (the secret itself is never kept) and live `lifetime` seconds: a key revoked through another
/// node stops working here within that time; revoking through this node forgets it at once.
final class APIKeyCache: Sendable {
    let lifetime: TimeInterval
    let capacity: Int
    private let entries = NIOLockedValueBox<[[UInt8]: Entry]>([:])

    private struct Entry {
        var key: AppAPIKey
        var expires: Date
    }

    init(lifetime: TimeInterval = 5, capacity: Int = 10_000) {
        self.lifetime = lifetime
        self.capacity = capacity
    }

    func key(for secret: String, now: Date) -> AppAPIKey? {
        let digest = Self.digest(secret)
        return entries.withLockedValue { entries in
            guard let entry = entries[digest] else { return nil }
            guard entry.expires > now else {
                entries[digest] = nil
                return nil
            }
            return entry.key
        }
    }

    func remember(_ key: AppAPIKey, for secret: String, now: Date) {
        let digest = Self.digest(secret)
        entries.withLockedValue { entries in
            if entries.count >= capacity { entries = entries.filter { $0.value.expires > now } }
            guard entries.count < capacity else { return }
            entries[digest] = Entry(key: key, expires: now.addingTimeInterval(lifetime))
        }
    }

    /// Forgets every entry of a key (it was revoked here).
    func forget(keyID: String) {
        entries.withLockedValue { entries in entries = entries.filter { $0.value.key.id != keyID } }
    }

    private static func digest(_ secret: String) -> [UInt8] { Array(SHA256.hash(data: Data(secret.utf8))) }
}
