import Foundation

/// One entry of an app's event log: something that happened to a message, written by the store
/// in the same transaction as the record it comes from (the mailbox row, the push attempt, the
/// receipt, the read), so an event is never lost nor told of a change that did not commit.
/// Webhooks and the event stream read the log in order (docs/webhooks.md).
public struct MessageEvent: Hashable, Sendable {
    public enum Kind: String, Hashable, Sendable, CaseIterable {
        /// Stored in a recipient's mailbox (one per recipient user).
        case accepted
        /// A push that stood for the message was accepted by APNs.
        case pushed
        /// APNs refused a push that stood for the message, for good (after the retries).
        case apnsRefused = "apns-refused"
        /// The device has the message: its sync session acknowledged it, or its extension fetched it.
        case delivered
        case shown, opened, read
        /// The message expired before it reached the device.
        case expired
        /// APNs said the device's token is dead while sending a push that stood for the message.
        case tokenDead = "token-dead"

        /// The last word on a message for one device: exactly one of these comes per message and
        /// recipient device that existed when the message expired (or that got it).
        public var isTerminal: Bool { self == .delivered || self == .expired }
    }

    /// The log's position: events come out in this order (`EventPosition`).
    public var position: EventPosition
    public var appID: String
    public var kind: Kind
    public var messageID: String?
    public var userID: String?
    public var deviceID: String?
    public var pushID: String?
    public var apnsID: String?
    /// APNs' HTTP status (pushed, apns-refused, token-dead; 0 when no answer came).
    public var status: Int?
    public var reason: String?
    public var at: Date

    /// The event's id, unique within the store: what webhooks and the stream call it. It grows in
    /// the log's order on SQLite, not always on PostgreSQL (`EventPosition`).
    public var id: Int64 { position.sequence }

    public init(
        position: EventPosition, appID: String, kind: Kind, messageID: String? = nil, userID: String? = nil,
        deviceID: String? = nil, pushID: String? = nil, apnsID: String? = nil, status: Int? = nil, reason: String? = nil,
        at: Date
    ) {
        self.position = position
        self.appID = appID
        self.kind = kind
        self.messageID = messageID
        self.userID = userID
        self.deviceID = deviceID
        self.pushID = pushID
        self.apnsID = apnsID
        self.status = status
        self.reason = reason
        self.at = at
    }
}
