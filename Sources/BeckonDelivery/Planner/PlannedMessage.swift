import Foundation
import BeckonProtocol

/// What the planner needs to know about one message for one recipient.
public struct PlannedMessage: Hashable, Sendable, Codable {
    /// The message id: what pushes carry and the client deduplicates by (rule 9).
    public var id: String
    public var kind: MessageKind
    public var urgency: MessageUrgency
    /// What an alert may show; only the `content` strategy (and VoIP pushes) put text from here
    /// on the wire (rule 1). Thread and category are used by every alert.
    public var hints: NotificationHints?
    /// After this the message is not worth a push; it also caps `apns-expiration`.
    public var expiresAt: Date?
    /// The recipient's unread count including this message: the badge.
    public var unreadCount: Int
    /// A drop-in's keys for the push (nil for messages posted to `/v1/messages`).
    public var extras: PushExtras?

    public init(
        id: String, kind: MessageKind = .message, urgency: MessageUrgency = .normal,
        hints: NotificationHints? = nil, expiresAt: Date? = nil, unreadCount: Int, extras: PushExtras? = nil
    ) {
        self.extras = extras
        self.id = id
        self.kind = kind
        self.urgency = urgency
        self.hints = hints
        self.expiresAt = expiresAt
        self.unreadCount = unreadCount
    }


    func isExpired(at now: Date) -> Bool {
        if let expiresAt { return expiresAt <= now }
        return false
    }
}
