@testable import BeckonDelivery
import BeckonStore
import Foundation
import Testing

@Suite struct DeliveryReportTests {
    static func record(
        _ reason: String, pushType: String = "background", state: String = "sent", wake: String? = nil,
        latency: TimeInterval? = nil, messages: Int = 1
    ) -> PushRecord {
        PushRecord(
            reason: reason, strategy: "wake", pushType: pushType, state: state, status: state == "sent" ? 200 : 410,
            messageCount: messages, wake: wake, wakeLatency: latency)
    }

    @Test func wakeSuccessRateAndLatencyPerKind() throws {
        var records = (1...9).map { Self.record("wake", wake: "observed", latency: Double($0)) }
        records.append(Self.record("wake", wake: "missed"))
        records.append(Self.record("unreachable-alert", pushType: "alert", messages: 2))
        records.append(Self.record("wake", state: "failed"))
        let report = DeliveryReport(
            appID: "chat", since: Date(timeIntervalSince1970: 0), records: records, unreachableDevices: 1)
        #expect(report.pushes == 12)
        #expect(report.messagesInPushes == 13)
        #expect(report.escalations == 1)
        #expect(report.unreachableDevices == 1)
        #expect(report.wakeSuccessRate == 0.9)
        let wake = try #require(report.kinds.first { $0.reason == "wake" })
        #expect(wake.category == .wake)
        #expect(wake.pushes == 11)
        #expect(wake.sent == 10)
        #expect(wake.failed == 1)
        #expect(wake.connectedWithinWindow == 9)
        #expect(wake.notConnectedWithinWindow == 1)
        #expect(wake.wakeSuccessRate == 0.9)
        #expect(wake.latencySeconds?.p50 == 5)
        #expect(wake.latencySeconds?.max == 9)
        let alert = try #require(report.kinds.first { $0.reason == "unreachable-alert" })
        #expect(alert.wakeSuccessRate == nil)
    }

    @Test func alertsAndClearsAreTheirOwnKindsNeverWakes() throws {
        let records = [
            Self.record("alert", pushType: "alert", wake: "observed", latency: 2),
            Self.record("alert", pushType: "alert", wake: "missed"),
            Self.record("clear", wake: "missed"),
            Self.record("clear-all", pushType: "alert", wake: "missed"),
            Self.record("wake", wake: "missed"),
        ]
        let report = DeliveryReport(appID: "chat", since: Date(timeIntervalSince1970: 0), records: records, unreachableDevices: 0)
        #expect(report.wakeSuccessRate == 0, "only the background wake counts: it was missed")
        let alert = try #require(report.kinds.first { $0.reason == "alert" })
        #expect(alert.category == .alert)
        #expect(alert.connectedWithinWindowRate == 0.5)
        #expect(alert.wakeSuccessRate == nil)
        #expect(report.kinds.first { $0.reason == "clear" }?.category == .clear)
        #expect(report.kinds.first { $0.reason == "clear-all" }?.category == .clear)
    }
}
