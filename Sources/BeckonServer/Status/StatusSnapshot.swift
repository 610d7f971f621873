import BeckonDelivery
import BeckonStore
import Foundation

/// What the status page shows, gathered once per request (`StatusController.statusSnapshot`) and
/// rendered by `StatusPage`. Building it from push records is pure, so it is tested without a
/// server.
struct StatusSnapshot: Sendable {
    struct App: Sendable {
        var id: String
        var bundleID: String
        var counts: AppCounts
        var unreachable: Int
        var pushes: Int
        var sent: Int
        var failed: Int
        /// Over wakes measured in the window (design rule 10); nil before any was.
        var wakeSuccessRate: Double?
        var strategies: [StrategySeries]
        var failures: [Failure]
        /// Messages of the window shown within a minute, from the devices' receipts.
        var shown: [ShownShare] = []
        /// The app's webhook: where, and how far behind; nil when it has none.
        var webhook: Webhook?
    }

    /// One strategy's measured pushes over the window, bucket by bucket.
    struct Webhook: Sendable {
        var url: String
        var status: EventLogStatus
    }

    struct StrategySeries: Sendable {
        var strategy: String
        var buckets: [Bucket]
    }

    struct Bucket: Sendable, Equatable {
        var start: Date
        /// Pushes whose outcome is known: the device connected within the window, or did not.
        var measured: Int
        var observed: Int
        /// Median push-to-connection latency of the observed ones.
        var latencyP50: Double?

        var successRate: Double? { measured == 0 ? nil : Double(observed) / Double(measured) }
    }

    /// Pushes APNs refused for good (or that got no answer), by Apple's reason.
    struct Failure: Sendable, Equatable {
        var reason: String
        var count: Int
        var last: Date
    }

    var generatedAt: Date
    var since: Date
    var bucketSeconds: TimeInterval
    /// Live sync sessions on this node (each node serves its own page).
    var sessions: Int
    var apps: [App]

    /// Splits `since ... now` into `buckets` equal parts.
    static func bucketSeconds(since: Date, now: Date, buckets: Int) -> TimeInterval {
        max(1, now.timeIntervalSince(since) / Double(buckets))
    }

    /// Per strategy, bucket by bucket (empty buckets included, so every chart has the same time
    /// axis): of the message pushes whose outcome is known, how many were followed by the app
    /// within the reconnect window, and how fast. For `wake` that is the wake success rate; the
    /// other strategies send alerts, so theirs says how often users came back after one (the
    /// delivery report's `connectedWithinWindow`). Clears and calls wait for no one.
    static func strategies(
        _ records: [PushRecord], since: Date, bucketSeconds: TimeInterval, buckets: Int
    ) -> [StrategySeries] {
        let wakes = records.filter {
            let category = DeliveryReport.Category(reason: $0.reason, pushType: $0.pushType)
            return (category == .wake || category == .alert) && $0.wake != nil
        }
        return Dictionary(grouping: wakes, by: \.strategy).keys.sorted().map { strategy in
            var measured = Array(repeating: 0, count: buckets), latencies = Array(repeating: [Double](), count: buckets)
            for record in wakes where record.strategy == strategy {
                let index = min(buckets - 1, max(0, Int(record.createdAt.timeIntervalSince(since) / bucketSeconds)))
                measured[index] += 1
                if record.wake == "observed", let latency = record.wakeLatency { latencies[index].append(latency) }
            }
            return StrategySeries(strategy: strategy, buckets: (0..<buckets).map { index in
                let sorted = latencies[index].sorted()
                return Bucket(
                    start: since.addingTimeInterval(Double(index) * bucketSeconds), measured: measured[index],
                    observed: sorted.count, latencyP50: sorted.isEmpty ? nil : DeliveryReport.percentile(sorted, 0.5))
            })
        }
    }

    /// Failed pushes by reason, the most frequent first.
    static func failures(_ records: [PushRecord]) -> [Failure] {
        var byReason: [String: Failure] = [:]
        for record in records where record.state == "failed" {
            let reason = record.apnsReason ?? (record.status.map { $0 == 0 ? "no answer" : "HTTP \($0)" } ?? "no answer")
            var failure = byReason[reason] ?? Failure(reason: reason, count: 0, last: record.createdAt)
            failure.count += 1
            failure.last = max(failure.last, record.createdAt)
            byReason[reason] = failure
        }
        return byReason.values.sorted { ($0.count, $1.reason) > ($1.count, $0.reason) }
    }
}
