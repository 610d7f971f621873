@testable import BeckonServer
import BeckonStore
import Foundation
import Testing

@Suite struct DeliveryReportTests {
    static func record(
        _ reason: String, state: String = "sent", wake: String? = nil, latency: TimeInterval? = nil, messages: Int = 1
    ) -> PushRecord {
        PushRecord(
            reason: reason, strategy: "wake", state: state, status: state == "sent" ? 200 : 410, messageCount: messages,
            wake: wake, wakeLatency: latency)
    }

    @Test func wakeSuccessRateAndLatencyPerKind() throws {
        var records = (1...9).map { Self.record("wake", wake: "observed", latency: Double($0)) }
        records.append(Self.record("wake", wake: "missed"))
        records.append(Self.record("unreachable-alert", messages: 2))
        records.append(Self.record("wake", state: "failed"))
        let report = DeliveryReport(
            appID: "chat", since: Date(timeIntervalSince1970: 0), records: records, unreachableDevices: 1)
        #expect(report.pushes == 12)
        #expect(report.messagesInPushes == 13)
        #expect(report.escalations == 1)
        #expect(report.unreachableDevices == 1)
        let wake = try #require(report.kinds.first { $0.reason == "wake" })
        #expect(wake.pushes == 11)
        #expect(wake.sent == 10)
        #expect(wake.failed == 1)
        #expect(wake.wakesObserved == 9)
        #expect(wake.wakesMissed == 1)
        #expect(wake.wakeSuccessRate == 0.9)
        #expect(wake.wakeLatencySeconds?.p50 == 5)
        #expect(wake.wakeLatencySeconds?.max == 9)
        let alert = try #require(report.kinds.first { $0.reason == "unreachable-alert" })
        #expect(alert.wakeSuccessRate == nil)
    }
}
