import Foundation

/// The event service's clock and intervals, injectable so tests run them fast.
public struct EventTiming: Sendable {
    /// How often a sender with nothing to send looks at the log again.
    public var pollInterval: TimeInterval = 0.2
    /// How long a node's right to send an app's webhook lasts; renewed at every attempt, taken by
    /// another node when it lapses (the node died).
    public var lease: TimeInterval = 30
    /// How often expiries are logged.
    public var sweepInterval: TimeInterval = 1
    /// How often each webhook's lag is measured for the metrics (it counts what waits: with a
    /// long backlog, not a query for every second).
    public var lagInterval: TimeInterval = 10
    /// How often the log is trimmed (sent events past their retention, the backlog's excess).
    public var trimInterval: TimeInterval = 60
    public var now: @Sendable () -> Date = { Date() }

    public init() {}
}
