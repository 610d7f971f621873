import BeckonStore
import Foundation

/// `GET /v1/delivery/report`: how an app's pushes did (design rule 10), from the outbox's
/// records: per push reason and strategy, how many were sent, how many woke the app (the device
/// connected within the reconnect window) and how fast.
struct DeliveryReport: Encodable, Sendable {
    struct Kind: Encodable, Sendable {
        var reason: String
        var strategy: String
        var pushes: Int
        var sent: Int
        var failed: Int
        var pending: Int
        var wakesObserved: Int
        var wakesMissed: Int
        /// Observed ÷ (observed + missed); nil before any push was measured.
        var wakeSuccessRate: Double?
        var wakeLatencySeconds: Percentiles?
    }

    struct Percentiles: Encodable, Sendable {
        var p50: Double
        var p90: Double
        var p99: Double
        var max: Double
    }

    var appId: String
    var since: Date
    var pushes: Int
    /// Sum over pushes of the messages each was for; with `pushes`, what a message costs in pushes.
    var messagesInPushes: Int
    var pushesPerMessage: Double?
    /// Alerts sent because a wake was missed or the device was already unreachable (rule 4).
    var escalations: Int
    /// Devices unreachable now: they missed a wake and have not connected since.
    var unreachableDevices: Int
    var kinds: [Kind]

    init(appID: String, since: Date, records: [PushRecord], unreachableDevices: Int) {
        self.appId = appID
        self.since = since
        self.pushes = records.count
        self.messagesInPushes = records.reduce(0) { $0 + $1.messageCount }
        self.pushesPerMessage = messagesInPushes == 0 ? nil : Double(pushes) / Double(messagesInPushes)
        self.escalations = records.filter { $0.reason == "unreachable-alert" }.count
        self.unreachableDevices = unreachableDevices
        let groups = Dictionary(grouping: records) { "\($0.reason)\u{0}\($0.strategy)" }
        self.kinds = groups.values.map(Self.kind).sorted { ($0.reason, $0.strategy) < ($1.reason, $1.strategy) }
    }

    private static func kind(_ records: [PushRecord]) -> Kind {
        let observed = records.compactMap { $0.wake == "observed" ? $0.wakeLatency : nil }.sorted()
        let missed = records.filter { $0.wake == "missed" }.count
        let measured = observed.count + missed
        return Kind(
            reason: records[0].reason, strategy: records[0].strategy, pushes: records.count,
            sent: records.filter { $0.state == "sent" }.count, failed: records.filter { $0.state == "failed" }.count,
            pending: records.filter { $0.state == "pending" }.count, wakesObserved: observed.count, wakesMissed: missed,
            wakeSuccessRate: measured == 0 ? nil : Double(observed.count) / Double(measured),
            wakeLatencySeconds: observed.isEmpty ? nil : Percentiles(
                p50: percentile(observed, 0.50), p90: percentile(observed, 0.90), p99: percentile(observed, 0.99),
                max: observed[observed.count - 1]))
    }

    /// Nearest-rank percentile of sorted values.
    static func percentile(_ sorted: [Double], _ fraction: Double) -> Double {
        let rank = Int((fraction * Double(sorted.count)).rounded(.up))
        return sorted[min(max(rank, 1), sorted.count) - 1]
    }
}
