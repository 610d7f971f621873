import APNSCore
import BeckonDelivery
import Configuration
import Foundation

extension DeliveryConfiguration {
    /// `delivery.*`. Each app's policy and bundle id come from its declaration (`apps.<id>.*`),
    /// filled in where the node is assembled.
    init(reading config: ConfigReader) throws(BeckonConfigurationError) {
        self.init()
        // `delivery.sends-per-app`: an app's pushes in flight to APNs at once (a bulkhead: an
        // app whose pushes hang cannot take the others' slots). It also sizes what the dispatcher
        // may hold (8 claimed pushes a slot): with 200, 98% of a 100,000-device burst's pushes
        // were claimed again and its node CPU a push was 142-145 µs; with 800 none were, and
        // 111-119 µs (docs/benchmarks-history.md). 800 in flight is 400 streams on each of the
        // pool's two connections, under the 500-1,500 APNs has allowed one (docs/apns.md C.2).
        sendsPerApp = try config.positive("delivery.sends-per-app", default: sendsPerApp)
        // `delivery.attempts`, `delivery.retry-base-seconds`, `delivery.retry-cap-seconds`: a push
        // that keeps failing for transient reasons (429, 5xx, no answer), each attempt after the
        // APNs client's own retries, with a doubling, jittered backoff between them.
        retry = APNSRetryPolicy(
            maximumAttempts: try config.positive("delivery.attempts", default: retry.maximumAttempts),
            backoff: APNSBackoff(
                base: TimeInterval(try config.positive("delivery.retry-base-seconds", default: Int(retry.backoff.base))),
                cap: TimeInterval(try config.positive("delivery.retry-cap-seconds", default: Int(retry.backoff.cap)))))
        // `delivery.claim-lease-seconds`: a node that dies holding a claimed push leaves it due
        // again after this. `delivery.deadline-lease-seconds`: the same for a claimed planner
        // deadline (a reconnect window, a re-push, a call's ring), which then fires on another node.
        claimLease = TimeInterval(try config.positive("delivery.claim-lease-seconds", default: Int(claimLease)))
        deadlineLease = TimeInterval(try config.positive("delivery.deadline-lease-seconds", default: Int(deadlineLease)))
        // `trace.retention-hours`: how long `GET /v1/messages/{id}/trace` can tell a message's
        // pushes, attempts and receipts (docs/trace.md).
        traceRetention = TimeInterval(try config.positive("trace.retention-hours", default: Int(traceRetention / 3600)) * 3600)
    }
}
