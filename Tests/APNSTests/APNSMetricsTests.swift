import APNS
import APNSCore
import MetricsTestKit
import Testing

@Suite struct APNSMetricsTests {
    @Test func answersRetriesAndPoolStateAreExported() async throws {
        let metrics = TestMetrics()
        try await EmulatorHarness.run(metrics: metrics) { harness in
            let token = EmulatorHarness.newToken()
            harness.emulator.respond(with: .serviceUnavailable, deviceToken: token.hex, count: 1)
            #expect(try await harness.send(APNSAlertNotification(badge: 1), to: token).status == 200)
            try harness.emulator.unregisterDevice(token: token.hex)
            #expect(try await harness.send(APNSAlertNotification(badge: 1), to: token).status == 410)

            #expect(metrics.counterTotal(label: "apns_requests_total", dimensions: [("status", "200"), ("reason", "")]) == 1)
            #expect(metrics.counterTotal(label: "apns_requests_total", dimensions: [("status", "503"), ("reason", "ServiceUnavailable")]) == 1)
            #expect(metrics.counterTotal(label: "apns_requests_total", dimensions: [("status", "410"), ("reason", "Unregistered")]) == 1)
            #expect(metrics.counterTotal(label: "apns_retries_total") == 1)
            #expect(try metrics.expectTimer("apns_request_duration_seconds").values.count == 3)
            #expect(try metrics.expectGauge("apns_open_connections").lastValue == 1)
            // A stream is counted closed at the end of the read that answered it, just after the answer.
            let inFlight = try metrics.expectGauge("apns_in_flight_requests")
            for _ in 0..<200 where inFlight.lastValue != 0 { try await Task.sleep(for: .milliseconds(5)) }
            #expect(inFlight.lastValue == 0)
        }
    }
}
