import BeckonProtocol
import Foundation

/// A message to append, with its recipients already resolved to users of the app.
public struct NewMessage: Hashable, Sendable {
    /// User ids; duplicates are ignored (each user gets the message once).
    public var recipients: [String]
    public var kind: MessageKind
    /// Opaque to Beckon. Its size limit is the caller's to enforce (`AppLimits.maxPayloadBytes`).
    public var payload: Data
    public var hints: NotificationHints?
    public var urgency: MessageUrgency
    public var expiresAt: Date?
    /// The backend's key for this message: a retried POST with the same key stores nothing new.
    public var idempotencyKey: String?

    public init(
        recipients: [String],
        kind: MessageKind = .message,
        payload: Data = Data(),
        hints: NotificationHints? = nil,
        urgency: MessageUrgency = .normal,
        expiresAt: Date? = nil,
        idempotencyKey: String? = nil
    ) {
        self.recipients = recipients
        self.kind = kind
        self.payload = payload
        self.hints = hints
        self.urgency = urgency
        self.expiresAt = expiresAt
        self.idempotencyKey = idempotencyKey
    }
}
