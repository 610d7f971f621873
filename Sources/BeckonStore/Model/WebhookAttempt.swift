import Foundation

/// One POST of a batch of events to an app's webhook, and the receiver's answer: the attempt log
/// an operator reads to see why a receiver is behind, and replays from.
public struct WebhookAttempt: Hashable, Sendable {
    /// The log's id for it; 0 before it is stored.
    public var id: Int64
    public var appID: String
    public var at: Date
    /// The batch's first and last event ids, and how many events it held.
    public var firstEvent: Int64
    public var lastEvent: Int64
    public var events: Int
    /// The receiver's HTTP status; 0 when no answer came (see `error`).
    public var status: Int
    public var error: String?
    public var duration: TimeInterval

    public var succeeded: Bool { (200..<300).contains(status) }

    public init(
        id: Int64 = 0, appID: String, at: Date, firstEvent: Int64, lastEvent: Int64, events: Int, status: Int,
        error: String? = nil, duration: TimeInterval
    ) {
        self.id = id
        self.appID = appID
        self.at = at
        self.firstEvent = firstEvent
        self.lastEvent = lastEvent
        self.events = events
        self.status = status
        self.error = error
        self.duration = duration
    }
}
