import BeckonProtocol
import Foundation

/// A stored message. Its content is stored once however many users it went to; each recipient's
/// mailbox refers to it at that user's own sequence number (`MailboxEntry`).
public struct Message: Hashable, Sendable, Codable {
    /// A lowercase UUID, assigned by the store: what pushes carry and clients deduplicate by.
    public var id: String
    public var appID: String
    public var kind: MessageKind
    public var payload: Data
    public var hints: NotificationHints?
    public var urgency: MessageUrgency
    public var expiresAt: Date?
    public var idempotencyKey: String?
    public var createdAt: Date

    public init(
        id: String,
        appID: String,
        kind: MessageKind,
        payload: Data,
        hints: NotificationHints?,
        urgency: MessageUrgency,
        expiresAt: Date?,
        idempotencyKey: String?,
        createdAt: Date
    ) {
        self.id = id
        self.appID = appID
        self.kind = kind
        self.payload = payload
        self.hints = hints
        self.urgency = urgency
        self.expiresAt = expiresAt
        self.idempotencyKey = idempotencyKey
        self.createdAt = createdAt
    }
}
