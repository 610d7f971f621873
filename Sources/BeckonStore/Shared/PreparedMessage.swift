import Crypto
import Foundation

/// A `NewMessage` checked and encoded outside the write transaction.
struct PreparedMessage: Sendable {
    var new: NewMessage
    /// Distinct, in the order given.
    var recipients: [String]
    var hintsJSON: String?
    /// SHA-256 of what a retry with the same idempotency key must repeat: kind, recipients,
    /// payload, hints and urgency. Not the expiry: a backend that sends a time-to-live gets a
    /// different `expiresAt` on each retry.
    var fingerprint: Data

    init(_ new: NewMessage) throws {
        var seen = Set<String>()
        let recipients = new.recipients.filter { seen.insert($0).inserted }
        guard !recipients.isEmpty else {
            throw BeckonStoreError.invalidArgument(field: "recipients", reason: "must name at least one user")
        }
        guard !recipients.contains(where: \.isEmpty) else {
            throw BeckonStoreError.invalidArgument(field: "recipients", reason: "user ids must not be empty")
        }
        if let key = new.idempotencyKey, key.isEmpty || key.utf8.count > 255 {
            throw BeckonStoreError.invalidArgument(field: "idempotencyKey", reason: "must be 1 to 255 bytes")
        }
        self.new = new
        self.recipients = recipients
        self.hintsJSON = try new.hints.map(StoreJSON.encode)

        // Each field length-prefixed, so no two different messages hash the same bytes. Hashed
        // directly rather than through a JSON rendering, which cost more than the insert.
        var hasher = SHA256()
        func field(_ bytes: some Collection<UInt8>) {
            withUnsafeBytes(of: UInt64(bytes.count).bigEndian) { hasher.update(bufferPointer: $0) }
            hasher.update(data: Array(bytes))
        }
        field(Array("beckon-message-v2".utf8))
        field(Array(new.kind.rawValue.utf8))
        field(Array(new.urgency.rawValue.utf8))
        field(Array(String(recipients.count).utf8))
        for recipient in recipients.sorted() { field(Array(recipient.utf8)) }
        field(Array(new.payload))
        field(Array((hintsJSON ?? "").utf8))
        self.fingerprint = Data(hasher.finalize())
    }
}
