import APNSEmulator
import BeckonJSON
import BeckonProtocol
@testable import BeckonServer
import BeckonStore
import Foundation
import Hummingbird
import HummingbirdTesting
import Testing

/// Sync protocol version 2 end to end: the real server (its node, with the built-in APNs emulator)
/// and real WebSocket devices. The emulator's record of what it accepted is the proof of what was
/// pushed.
@Suite struct SyncProtocolV2EndToEndTests {
    static let token = String(repeating: "e1", count: 32)
    static let otherToken = String(repeating: "e2", count: 32)
    static let voipToken = String(repeating: "e3", count: 32)

    func endCall(_ server: SyncTestServer, _ callID: String, _ outcome: String) async throws -> TestClient.Response {
        try await server.http { client in
            try await client.post(
                "/v1/calls/\(callID)/end", headers: APITestFixture.headers(bearer: server.chatKey),
                body: ByteBuffer(string: #"{"outcome":"\#(outcome)"}"#))
        }
    }

    @Test func endingACallStopsTheRingingTellsConnectedDevicesAndIsIdempotent() async throws {
        try await SyncTestServer.with(delivery: true, configure: {
            DeliveryEndToEndTests.fast(&$0)
            $0.apps[0].delivery.callTimeout = 30  // Rings until ended, well past the test.
        }) { server in
            _ = try await server.device(user: "bob", device: "old-phone", token: Self.token)
            let desk = try await server.device(user: "bob", device: "desk", token: nil)
            let session = try await server.connect(desk)
            _ = try await session.hello()
            let call = try await server.post(to: ["bob"], kind: "call")
            _ = try await session.next()  // The call's message frame.
            _ = try await server.pushes(to: Self.token, count: 2)  // Ringing.

            let ended = try await endCall(server, call, "answered-elsewhere")
            #expect(ended.status == .ok)
            // Live: the connected device is told at once.
            let frame = try await session.next()
            #expect(frame["type"]?.string == "callEnded")
            #expect(frame["callId"]?.string == call)
            #expect(frame["outcome"]?.string == "answered-elsewhere")
            // The ringing alert is replaced (same collapse id) by the outcome.
            let replacement = try await server.waitForDelivery(to: Self.token) {
                (try? DeliveryEndToEndTests.json($0)["beckon"] as? [String: Any])?["reason"] as? String == "answered-elsewhere"
            }
            #expect(replacement.collapseID == call)
            // And nothing rings after it: the emulator's log ends with the replacement.
            let countAfterEnd = server.emulator.deliveries(to: Self.token).count
            try await Task.sleep(for: .milliseconds(600))  // Three ring intervals.
            let after = server.emulator.deliveries(to: Self.token).dropFirst(countAfterEnd - 1)
            #expect(after.map { (try? DeliveryEndToEndTests.json($0)["beckon"] as? [String: Any])?["reason"] as? String }
                == ["answered-elsewhere"])

            #expect(try await endCall(server, call, "answered-elsewhere").status == .ok, "the same end again")
            let conflict = try await endCall(server, call, "declined")
            #expect(conflict.status == .conflict)
            #expect(try await endCall(server, UUID().uuidString.lowercased(), "missed").status == .notFound)
            let message = try await server.post(to: ["bob"])
            #expect(try await endCall(server, message, "missed").status == .notFound, "a message is not a call")
            try await session.send(#"{"type":"bye"}"#)
            _ = try await session.closeCode()
        }
    }

    @Test func anAppWokenForACallThatEndedMeanwhileLearnsItAtWelcome() async throws {
        try await SyncTestServer.with(delivery: true, configure: {
            DeliveryEndToEndTests.fast(&$0)
            $0.apps[0].delivery.callTimeout = 30  // No VoIP push is sent after the timeout: give it time.
        }) { server in
            let phone = try await server.device(user: "alice", device: "phone", token: Self.token, voip: Self.voipToken)
            let call = try await server.post(to: ["alice"], kind: "call")
            _ = try await server.pushes(to: Self.voipToken, count: 1)  // CallKit rings; the app starts.
            #expect(try await endCall(server, call, "cancelled").status == .ok)  // The caller gives up first.
            let app = try await server.connect(phone)
            _ = try await app.hello(cursor: 0)
            let told = try await app.next()
            #expect(told["type"]?.string == "callEnded")
            #expect(told["callId"]?.string == call)
            #expect(told["outcome"]?.string == "cancelled")
            try await app.send(#"{"type":"bye"}"#)
            _ = try await app.closeCode()
        }
    }

    @Test func noCallPushIsSentAfterTheCallEndedRetriesIncluded() async throws {
        try await SyncTestServer.with(delivery: true, configure: {
            DeliveryEndToEndTests.fast(&$0)
            $0.apps[0].delivery.callTimeout = 60  // Only the end can stop it within the test.
        }) { server in
            _ = try await server.device(user: "alice", device: "phone", token: Self.token, voip: Self.voipToken)
            // APNs answers 503 for this VoIP token: the push waits in the outbox for a retry.
            server.emulator.respond(with: .serviceUnavailable, deviceToken: Self.voipToken)
            let call = try await server.post(to: ["alice"], kind: "call")
            try await server.waitUntil { server.emulator.counters.byStatus[503, default: 0] >= 1 }
            #expect(try await endCall(server, call, "cancelled").status == .ok)
            // APNs is back: a retry would now be accepted, so only the dispatcher can keep it out.
            server.emulator.clearFaults()
            let record: PushRecord
            do {
                record = try await server.waitForPush(timeout: .seconds(20)) { $0.reason == "call-voip" && $0.state == "failed" }
            } catch {
                Issue.record("records: \(try await server.store.pushRecords(appID: "chat", since: Date(timeIntervalSince1970: 0))), counters: \(server.emulator.counters)")
                throw error
            }
            #expect(record.status == 0, "not Apple's answer: dropped before sending")
            #expect(server.emulator.deliveries(to: Self.voipToken).isEmpty)
        }
    }

    @Test func anExtensionFetchStopsTheRepushForThatDevice() async throws {
        try await SyncTestServer.with(delivery: true, configure: DeliveryEndToEndTests.fast) { server in
            let phone = try await server.device(user: "alice", device: "phone", token: Self.token, serviceExtension: true)
            let session = try await server.connect(phone)
            _ = try await session.hello()
            let id = try await server.post(to: ["alice"])
            _ = try await session.next()
            try await session.closeWithoutBye()  // Unacked: the planner will re-push it (rule 5).
            _ = try await server.pushes(to: Self.token, count: 1)  // The first re-push.

            // The notification service extension fetches it by id: shown on this device.
            let fetched = try await server.http { client in
                try await client.get("/v1/messages/\(id)", headers: APITestFixture.headers(bearer: phone))
            }
            #expect(fetched.status == .ok)
            // Once the planner has taken the fetch in, nothing is left to re-push (a re-push it
            // decided before is still sent; none after).
            let ref = DeviceRef(appID: "chat", deviceID: "phone")
            try await server.waitUntil { try await server.store.deliveryStates([ref])[ref]?.nextDeadline == nil }
            try await Task.sleep(for: .milliseconds(100))  // Let a push decided before it land.
            let count = server.emulator.deliveries(to: Self.token).count
            try await Task.sleep(for: .milliseconds(1200))  // Past two more re-push delays.
            #expect(server.emulator.deliveries(to: Self.token).count == count, "no re-push after the fetch")
        }
    }

    @Test func aConnectionAfterTheWindowIsAMissedWakeNotASuccess() async throws {
        try await SyncTestServer.with(delivery: true, configure: {
            DeliveryEndToEndTests.fast(&$0)
            $0.apps[0].delivery.reconnectWindow = 0.3
        }) { server in
            let phone = try await server.device(user: "alice", device: "phone", token: Self.token)
            try await server.post(to: ["alice"])
            _ = try await server.pushes(to: Self.token, count: 2)  // The wake, then the escalation.
            try await Task.sleep(for: .milliseconds(400))  // Both windows are over.
            let late = try await server.connect(phone)
            _ = try await late.hello()
            try await late.send(#"{"type":"bye"}"#)
            _ = try await late.closeCode()
            let wake = try await server.waitForPush { $0.reason == "wake" && $0.wake != nil }
            #expect(wake.wake == "missed")
            let alert = try await server.waitForPush { $0.reason == "unreachable-alert" && $0.wake != nil }
            #expect(alert.wake == "missed")
        }
    }
}
