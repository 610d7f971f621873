import Foundation

/// The per-user mailbox: messages appended in one order per user, and read back after a
/// sequence number or by id. What posting a message writes and what syncing and planning read.
public protocol MailboxStore: Sendable {
    /// Appends a batch of messages in one transaction: all of them are stored, or none.
    ///
    /// Each recipient user gets the next sequence number of their mailbox. A message whose
    /// (app, idempotency key) was stored before is not stored again: its result is the original
    /// one with `isDuplicate == true`. A reused key with different content throws
    /// `BeckonStoreError.idempotencyConflict`. Payload limits are the caller's to enforce.
    func appendMessages(appID: String, _ messages: [NewMessage]) async throws -> [AppendedMessage]
    /// The user's mailbox after `sequence`, in order, at most `limit` entries; messages whose
    /// `expiresAt` has passed are left out.
    func messages(for user: UserRef, after sequence: Int64, limit: Int) async throws -> [MailboxEntry]
    /// One message of the user's mailbox (what a notification service extension fetches by id);
    /// nil if the message is not in that user's mailbox.
    func mailboxEntry(for user: UserRef, messageID: String) async throws -> MailboxEntry?
    /// A message of the app, whoever its recipients are.
    func message(appID: String, id: String) async throws -> Message?
    /// The last sequence number assigned in the user's mailbox (0 if none).
    func lastSequence(of user: UserRef) async throws -> Int64
}
