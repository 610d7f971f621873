import BeckonProtocol
import BeckonStore
import Foundation
import Metrics

/// The delivery planner's figures (design rule 10), as swift-metrics, so `/metrics` shows them:
///
/// - `beckon_pushes_total{reason, strategy}`: pushes decided;
/// - `beckon_push_results_total{result, status}`: what APNs answered (`sent`, `failed`, `retry`);
/// - `beckon_wakes_total{outcome, reason, strategy}`: whether the device connected after a push
///   (`observed`) or not within the reconnect window (`missed`);
/// - `beckon_wake_latency_seconds{reason, strategy}`: push to connection, for observed wakes;
/// - `beckon_escalations_total`: devices found unreachable after a missed wake (rule 4);
/// - `beckon_delivery_events_queued`: events waiting for the planner;
/// - `beckon_delivery_conflicts_total`: batches planned again because another node saved one of
///   their devices first (several nodes);
/// - `beckon_outbox_taken_total{way}`: pushes the dispatcher took to send, `handed_over` by the
///   planner as they were saved or `claimed` from the outbox (a backlog, retries, another node's);
/// - `beckon_messages_shown_within_minute_ratio{app, strategy}`: of the app's messages of the last
///   hour, the share a device reported shown within a minute (its receipts, docs/trace.md).
struct DeliveryMetrics: Sendable {
    let factory: any MetricsFactory

    func shown(_ share: ShownShare, app: String) {
        guard let ratio = share.share else { return }
        Gauge(label: "beckon_messages_shown_within_minute_ratio", dimensions: [("app", app), ("strategy", share.strategy)], factory: factory)
            .record(ratio)
    }

    func decided(_ push: PlannedPush) {
        Counter(label: "beckon_pushes_total", dimensions: [
            ("reason", push.reason.rawValue), ("strategy", push.strategy.rawValue),
        ], factory: factory).increment()
    }

    func result(_ result: String, status: Int) {
        Counter(label: "beckon_push_results_total", dimensions: [("result", result), ("status", String(status))], factory: factory)
            .increment()
    }

    func wake(observed latency: TimeInterval?, reason: PushReason, strategy: DeliveryStrategy) {
        let dimensions = [("reason", reason.rawValue), ("strategy", strategy.rawValue)]
        Counter(
            label: "beckon_wakes_total", dimensions: [("outcome", latency == nil ? "missed" : "observed")] + dimensions,
            factory: factory
        ).increment()
        if let latency {
            Metrics.Timer(label: "beckon_wake_latency_seconds", dimensions: dimensions, preferredDisplayUnit: .seconds, factory: factory)
                .recordNanoseconds(Int64(latency * 1e9))
        }
    }

    func escalated() {
        Counter(label: "beckon_escalations_total", factory: factory).increment()
    }

    func conflicted() {
        Counter(label: "beckon_delivery_conflicts_total", factory: factory).increment()
    }

    func taken(_ count: Int, way: String) {
        guard count > 0 else { return }
        Counter(label: "beckon_outbox_taken_total", dimensions: [("way", way)], factory: factory).increment(by: count)
    }

    func queued(_ count: Int) {
        Gauge(label: "beckon_delivery_events_queued", factory: factory).record(count)
    }
}
