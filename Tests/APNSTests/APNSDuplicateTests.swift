import APNS
import APNSCore
import APNSEmulator
import Foundation
import Testing

/// A notification APNs accepted must not be sent again. Only an answer lost with its connection (or
/// cut off by the deadline) leaves the outcome unknown (apns.md G.19).
@Suite struct APNSDuplicateTests {
    /// 200 sends at once, 60 % of requests answered 500/503, GOAWAY every 47 streams: each GOAWAY
    /// refuses the streams above it, and answers are owed below it while it closes. An emulator
    /// that closed with answers owed, or whose HTTP/2 layer took the refusals for an attack (a
    /// second GOAWAY with last-stream-id 0), would have the client resend streams that had been
    /// delivered. (FaultTests holds the 201st-refusal case on its own; 500 sends here
    /// starved the rest of the suite on two cores.)
    @Test func everyNotificationIsDeliveredOnceUnderGoAwayAndServerErrors() async throws {
        try await EmulatorHarness.run { harness in
            _ = try await harness.sendConcurrently(2)
            harness.emulator.setRandomFailures(internalServerErrorRate: 0.3, serviceUnavailableRate: 0.3)
            harness.emulator.goAway(afterStreams: 47)
            harness.emulator.goAwayLiveConnections()
            let tokens = (0..<200).map { _ in EmulatorHarness.newToken() }
            let answered = await withTaskGroup(of: Bool.self) { group in
                for token in tokens {
                    group.addTask { (try? await harness.send(APNSAlertNotification(badge: 1), to: token))?.status == 200 }
                }
                return await group.reduce(0) { $0 + ($1 ? 1 : 0) }
            }
            let copies = tokens.map { harness.emulator.deliveries(to: $0.hex).count }
            #expect(copies.filter { $0 > 1 }.isEmpty, "\(copies.filter { $0 > 1 }.count) devices got a notification twice")
            // Every 200 the client returned is a delivery (the rest ran out of attempts or time).
            #expect(copies.filter { $0 == 1 }.count >= answered)
        }
    }

    /// APNs announces MAX_CONCURRENT_STREAMS 1 after each rejection and its normal limit after the
    /// next 200 (apns.md C.2, G.16): hundreds of SETTINGS frames a minute on a busy connection.
    /// NIO's default limit (200 control frames per 30 s) made that a connection error, which
    /// closed the connection with every stream on it: answers lost, requests resent.
    @Test func aConnectionOutlivesAPNsSettingsChurn() async throws {
        try await EmulatorHarness.run(configureEmulator: { $0.throttleOnReject = true }, configureClient: { _ in }) { (harness: EmulatorHarness) async throws in
            let rejected = EmulatorHarness.newToken()
            for _ in 0..<150 {
                harness.emulator.respond(with: .badDeviceToken, deviceToken: rejected.hex, count: 1)
                #expect(try await harness.send(APNSAlertNotification(badge: 1), to: rejected).status == 400)
                #expect(try await harness.send(APNSAlertNotification(badge: 1)).status == 200)
            }
            #expect(harness.emulator.counters.connectionsAccepted == 1)
        }
    }
}
