import APNSCore
import Foundation

/// What delivery is told at start-up: each app's policy and bundle id, and the dispatcher's and
/// driver's limits (`delivery.*` in the node's configuration, README "Configuration").
public struct DeliveryConfiguration: Sendable, Equatable {
    /// Each app's delivery policy and its bundle id (the `apns-topic`), by app id.
    public var policies: [String: DeliveryPolicy] = [:]
    public var bundleIDs: [String: String] = [:]
    /// Each app's pushes in flight at once (a bulkhead between apps).
    public var sendsPerApp = 800
    /// Attempts of a push that keeps failing for transient reasons, and the backoff between them.
    public var retry = PushDispatcher.defaultRetry
    /// How long a claimed push is held for sending, and a claimed planner deadline for planning.
    public var claimLease: TimeInterval = 300
    public var deadlineLease: TimeInterval = 30
    /// After graceful shutdown begins, how long sends may still wait for APNs.
    public var shutdownGrace: Duration = .seconds(10)
    /// How long a message's trace records (its pushes' links and attempts, the devices'
    /// receipts) are kept: 7 days.
    public var traceRetention: TimeInterval = 7 * 24 * 3600

    public init() {}
}
