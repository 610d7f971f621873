import Foundation

/// How far an app's webhook is behind its event log: what the status page and the metrics show.
public struct EventLogStatus: Hashable, Sendable {
    public var appID: String
    /// The webhook's position: every event up to it was answered 2xx (or dropped).
    public var cursor: EventPosition
    /// Events after the cursor, not yet answered.
    public var behind: Int
    /// When the oldest of those happened; nil when none is waiting.
    public var oldestWaiting: Date?
    /// Events dropped unsent because the backlog was full, since the log was turned on.
    public var dropped: Int
    /// The node sending the app's webhook, while its lease lasts.
    public var sender: String?
    public var lastAttempt: WebhookAttempt?

    public init(
        appID: String, cursor: EventPosition, behind: Int, oldestWaiting: Date?, dropped: Int, sender: String?,
        lastAttempt: WebhookAttempt?
    ) {
        self.appID = appID
        self.cursor = cursor
        self.behind = behind
        self.oldestWaiting = oldestWaiting
        self.dropped = dropped
        self.sender = sender
        self.lastAttempt = lastAttempt
    }
}
