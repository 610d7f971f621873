import BeckonProtocol
import BeckonStore
import Foundation

/// `GET /v1/delivery/report`: how an app's pushes did (design rule 10), from the outbox's
/// records, per push reason and strategy: how many were sent, and how many were followed by a
/// connection of the device within the reconnect window, and how fast.
///
/// Only a background push exists to wake the app, so only wakes have a wake success rate. Alerts,
/// clears and calls are reported as kinds of their own with the same connected-within-window
/// figures: a user may open the app after an alert or not, and neither is a wake that worked or
/// failed. Merging them would make the wake figure mean something else.
package struct DeliveryReport: Encodable, Sendable {
    /// What a push is for, as far as measuring it goes.
    package enum Category: String, Encodable, Sendable {
        case wake, alert, clear, call

        package init(reason: String, pushType: String?) {
            switch PushReason(rawValue: reason) {
            case .clear?, .clearAll?: self = .clear
            case .callVoIP?, .callRing?, .missedCall?, .answeredElsewhere?, .declinedElsewhere?: self = .call
            default: self = pushType == "background" ? .wake : .alert
            }
        }
    }

    package struct Kind: Encodable, Sendable {
        package var reason: String
        package var strategy: String
        package var category: Category
        package var pushes: Int
        package var sent: Int
        package var failed: Int
        package var pending: Int
        /// The device connected within the reconnect window after the push.
        package var connectedWithinWindow: Int
        /// The window passed without a connection (a later connection is not credited).
        package var notConnectedWithinWindow: Int
        /// connected ÷ (connected + not); nil before any push was measured.
        package var connectedWithinWindowRate: Double?
        /// The same rate, for wakes only: nil for alerts, clears and calls.
        package var wakeSuccessRate: Double?
        /// Push to connection, for the pushes followed by one within the window.
        package var latencySeconds: Percentiles?
    }

    package struct Percentiles: Encodable, Sendable {
        package var p50: Double
        package var p90: Double
        package var p99: Double
        package var max: Double
    }

    package var appId: String
    package var since: Date
    package var pushes: Int
    /// Sum over pushes of the messages each was for; with `pushes`, what a message costs in pushes.
    package var messagesInPushes: Int
    package var pushesPerMessage: Double?
    /// Over every wake (background push for new messages): connected within the window ÷ measured.
    package var wakeSuccessRate: Double?
    /// Alerts sent because a wake was missed or the device was already unreachable (rule 4).
    package var escalations: Int
    /// Devices unreachable now: they missed a wake and have not connected since.
    package var unreachableDevices: Int
    package var kinds: [Kind]

    package init(appID: String, since: Date, records: [PushRecord], unreachableDevices: Int) {
        self.appId = appID
        self.since = since
        self.pushes = records.count
        self.messagesInPushes = records.reduce(0) { $0 + $1.messageCount }
        self.pushesPerMessage = messagesInPushes == 0 ? nil : Double(pushes) / Double(messagesInPushes)
        self.escalations = records.filter { $0.reason == PushReason.unreachableAlert.rawValue }.count
        self.unreachableDevices = unreachableDevices
        let wakes = records.filter { Category(reason: $0.reason, pushType: $0.pushType) == .wake }
        self.wakeSuccessRate = Self.rate(wakes)
        let groups = Dictionary(grouping: records) { "\($0.reason)\u{0}\($0.strategy)" }
        self.kinds = groups.values.map(Self.kind).sorted { ($0.reason, $0.strategy) < ($1.reason, $1.strategy) }
    }

    private static func rate(_ records: [PushRecord]) -> Double? {
        let connected = records.filter { $0.wake == "observed" }.count
        let measured = connected + records.filter { $0.wake == "missed" }.count
        return measured == 0 ? nil : Double(connected) / Double(measured)
    }

    private static func kind(_ records: [PushRecord]) -> Kind {
        let latencies = records.compactMap { $0.wake == "observed" ? $0.wakeLatency : nil }.sorted()
        // Rows of one reason share a category, except rows from before push types were stored.
        let category = Category(reason: records[0].reason, pushType: records.lazy.compactMap(\.pushType).first)
        let rate = rate(records)
        return Kind(
            reason: records[0].reason, strategy: records[0].strategy, category: category, pushes: records.count,
            sent: records.filter { $0.state == "sent" }.count, failed: records.filter { $0.state == "failed" }.count,
            pending: records.filter { $0.state == "pending" }.count, connectedWithinWindow: latencies.count,
            notConnectedWithinWindow: records.filter { $0.wake == "missed" }.count, connectedWithinWindowRate: rate,
            wakeSuccessRate: category == .wake ? rate : nil,
            latencySeconds: latencies.isEmpty ? nil : Percentiles(
                p50: percentile(latencies, 0.50), p90: percentile(latencies, 0.90), p99: percentile(latencies, 0.99),
                max: latencies[latencies.count - 1]))
    }

    /// Nearest-rank percentile of sorted values.
    package static func percentile(_ sorted: [Double], _ fraction: Double) -> Double {
        let rank = Int((fraction * Double(sorted.count)).rounded(.up))
        return sorted[min(max(rank, 1), sorted.count) - 1]
    }
}
