import APNSCore
import APNSEmulator
import BeckonJSON
import BeckonProtocol
@testable import BeckonServer
import BeckonStore
import Foundation
import Hummingbird
import HummingbirdTesting
import Testing

/// `GET /v1/messages/{id}/trace` over the real node, its planner and the in-process emulator:
/// the trace tells what the emulator received and what the device did.
@Suite struct TraceEndToEndTests {
    static let token = DeliveryEndToEndTests.token
    static let tabletToken = DeliveryEndToEndTests.otherToken

    /// The trace of `id` as the API answers it, with the key's status.
    static func trace(_ server: SyncTestServer, _ id: String, bearer: String) async throws -> (HTTPResponse.Status, JSONValue?) {
        let response = try await server.http { client in
            try await client.get("/v1/messages/\(id)/trace", headers: APITestFixture.headers(bearer: bearer))
        }
        return (response.status, response.body.flatMap { try? JSONParser.parse(Array($0.readableBytesView)) })
    }

    static func events(_ trace: JSONValue?, device: String) -> [JSONValue] {
        trace?["devices"]?.arrayValue?.first { $0["deviceId"]?.stringValue == device }?["events"]?.arrayValue ?? []
    }

    static func types(_ events: [JSONValue]) -> [String] { events.compactMap { $0["type"]?.stringValue } }

    /// A phone that never comes back: its wake is pushed and missed, an alert follows (rule 4),
    /// then its extension fetches the message. Every step is in the trace, as the emulator saw it.
    @Test func anUnreachablePhonesTraceShowsTheWakeMissedTheEscalationAndTheFetch() async throws {
        try await SyncTestServer.with(delivery: true, configure: {
            DeliveryEndToEndTests.fast(&$0)
            $0.apps[0].delivery.reconnectWindow = 0.3
        }) { server in
            let credential = try await server.device(user: "alice", device: "phone", token: Self.token)
            let id = try await server.post(to: ["alice"])
            let received = try await server.pushes(to: Self.token, count: 2)
            #expect(received.map(\.pushType) == [.background, .alert])
            _ = try await server.waitForPush { $0.wake == "missed" }
            _ = try await server.waitForPush { $0.reason != "wake" && $0.state == "sent" }
            let fetched = try await server.http { client in
                try await client.get("/v1/messages/\(id)", headers: APITestFixture.headers(bearer: credential))
            }
            #expect(fetched.status == .ok)

            let (status, trace) = try await Self.trace(server, id, bearer: server.chatKey)
            #expect(status == .ok)
            #expect(trace?["messageId"]?.stringValue == id)
            #expect(trace?["recipients"]?.arrayValue?.first?["userId"]?.stringValue == "alice")
            let events = Self.events(trace, device: "phone")
            // In time order. APNs' answer to the wake may come after its window ended (a loaded
            // machine), so the order is checked where it is causal: each push before its answer,
            // the missed wake before the escalation, the fetch last.
            let types = Self.types(events)
            #expect(types.sorted() == ["apns", "apns", "push", "push", "shown", "stored", "synced", "wake-missed"], "\(types)")
            #expect(types.first == "stored" && Array(types.suffix(2)) == ["synced", "shown"], "\(types)")
            func index(_ type: String, pushID: String? = nil, _ nth: Int = 0) -> Int {
                events.indices.filter { events[$0]["type"]?.stringValue == type && (pushID == nil || events[$0]["pushId"]?.stringValue == pushID) }[nth]
            }
            for push in events where push["type"]?.stringValue == "push" {
                let id = push["pushId"]?.stringValue
                #expect(index("push", pushID: id) < index("apns", pushID: id))
            }
            #expect(index("wake-missed") < index("push", 1))
            let pushes = events.filter { $0["type"]?.stringValue == "push" }
            #expect(pushes.map { $0["pushType"]?.stringValue } == ["background", "alert"])
            #expect(pushes.map { $0["priority"]?.intValue } == [5, 10])
            #expect(pushes.first?["reason"]?.stringValue == "wake")
            // Each push's apns-id is the one the emulator received; sandbox answers carry a unique id.
            #expect(pushes.compactMap { $0["apnsId"]?.stringValue } == received.map { $0.apnsID.lowercased() })
            let answers = events.filter { $0["type"]?.stringValue == "apns" }
            #expect(answers.allSatisfy { $0["status"]?.intValue == 200 && $0["outcome"]?.stringValue == "sent" })
            #expect(answers.allSatisfy { $0["uniqueId"]?.stringValue?.count == 36 })
            #expect(events.first?["sequence"]?.intValue == 1)
        }
    }

    /// A connected phone has it by its acknowledgement; reading it on the tablet is a read there
    /// and a read elsewhere on the phone.
    @Test func aConnectedPhonesAckAndAReadOnTheTabletAreTraced() async throws {
        try await SyncTestServer.with(delivery: true, configure: DeliveryEndToEndTests.fast) { server in
            let phone = try await server.device(user: "alice", device: "phone", token: Self.token)
            _ = try await server.device(user: "alice", device: "tablet", token: Self.tabletToken)
            let client = try await server.connect(phone)
            _ = try await client.hello()
            let id = try await server.post(to: ["alice"])
            #expect(try await client.messages(1) == [1])
            try await client.send(#"{"type":"ack","upTo":1}"#)
            try await server.waitUntil { (try await server.store.traceRecords(appID: "chat", messageID: id))?.receipts.isEmpty == false }
            _ = try await server.store.markRead(device: DeviceRef(appID: "chat", deviceID: "tablet"), messageIDs: [id])

            let (_, trace) = try await Self.trace(server, id, bearer: server.chatKey)
            let phoneEvents = Self.types(Self.events(trace, device: "phone"))
            #expect(phoneEvents.first == "stored")
            #expect(phoneEvents.contains("synced") && phoneEvents.last == "read-elsewhere", "\(phoneEvents)")
            #expect(!phoneEvents.contains("push"), "a connected device is not pushed")
            #expect(Self.events(trace, device: "phone").last?["deviceId"]?.stringValue == "tablet")
            #expect(Self.types(Self.events(trace, device: "tablet")).contains("read"))
        }
    }

    @Test func onlyTheAppsKeyReadsItsTraces() async throws {
        try await SyncTestServer.with(delivery: true, configure: DeliveryEndToEndTests.fast) { server in
            let credential = try await server.device(user: "alice", device: "phone", token: Self.token)
            let id = try await server.post(to: ["alice"])
            let mailKey = try await server.store.createAPIKey(appID: "mail", name: "test").secret
            #expect(try await Self.trace(server, id, bearer: mailKey).0 == .notFound, "another app's message")
            #expect(try await Self.trace(server, "no-such-message", bearer: server.chatKey).0 == .notFound)
            #expect(try await Self.trace(server, id, bearer: credential).0 == .unauthorized, "a device credential")
        }
    }
}
