import BeckonProtocol
@testable import BeckonServer
import BeckonSeal
import APNSCore
import APNSEmulator
@testable import BeckonDelivery
import BeckonStore
import Crypto
import Hummingbird
import HummingbirdTesting
import Foundation
import Testing

/// The real server with the delivery planner and the in-process APNs emulator, devices that connect
/// and drop over the sync protocol, and what the emulator received.
@Suite struct DeliveryEndToEndTests {
    static let token = String(repeating: "a1", count: 32)
    static let otherToken = String(repeating: "b2", count: 32)
    static let voipToken = String(repeating: "c3", count: 32)

    /// Short windows, so the scenarios run in well under a second each.
    static func fast(_ configuration: inout BeckonServerConfiguration) {
        configuration.apps[0].delivery.reconnectWindow = 0.4
        configuration.apps[0].delivery.repushInitialDelay = 0.2
        configuration.apps[0].delivery.callRingInterval = 0.2
        configuration.apps[0].delivery.callTimeout = 0.7
    }

    @Test func aConnectedDeviceGetsNoPush() async throws {
        try await SyncTestServer.with(delivery: true, configure: Self.fast) { server in
            let credential = try await server.device(user: "alice", device: "phone", token: Self.token)
            _ = try await server.device(user: "bob", device: "tablet", token: Self.otherToken)
            let client = try await server.connect(credential)
            _ = try await client.hello()
            try await server.post(to: ["alice"])
            #expect(try await client.messages(1) == [1])
            // A barrier, not a sleep: the planner takes events one batch at a time in the order
            // they were posted, so once a later message for an offline device is pushed, alice's
            // was planned and saved, in the same commit or an earlier one.
            try await server.post(to: ["bob"])
            _ = try await server.pushes(to: Self.otherToken, count: 1)
            // Wakes only: on a loaded machine bob's 0.4 s reconnect window may have run out too,
            // and his unreachable alert be on its way.
            let wakes = try await server.store.pushRecords(appID: "chat", since: .distantPast).filter { $0.reason == "wake" }
            #expect(wakes.count == 1, "bob's only")
            #expect(server.emulator.deliveries(to: Self.token).isEmpty)
        }
    }

    @Test func aWakeThenAReconnectIsMeasured() async throws {
        try await SyncTestServer.with(delivery: true, configure: {
            Self.fast(&$0)
            $0.apps[0].delivery.reconnectWindow = 10  // Ample: the reconnect must land inside it.
        }) { server in
            let credential = try await server.device(user: "alice", device: "phone", token: Self.token)
            let posted = ContinuousClock.now
            let id = try await server.post(to: ["alice"])
            let wake = try #require(try await server.pushes(to: Self.token, count: 1).first)
            #expect(wake.pushType == .background)
            #expect(wake.priority == 5)
            #expect(wake.topic == "com.example.chat")
            let payload = try Self.json(wake)
            #expect((payload["aps"] as? [String: Any])?.count == 1)
            #expect((payload["beckon"] as? [String: Any])?["ids"] as? [String] == [id])

            // The app comes back a known while after its wake: the latency measured must cover
            // that wait and no more than the whole exchange.
            try await Task.sleep(for: .milliseconds(300))
            let client = try await server.connect(credential)
            _ = try await client.hello()
            let record = try await server.waitForPush { $0.wake != nil }
            let exchange = ContinuousClock.now - posted
            #expect(record.wake == "observed")
            let latency = try #require(record.wakeLatency)
            #expect(latency >= 0.3 - 0.002, "measured from the push to the connection (ms precision)")
            #expect(.seconds(latency) <= exchange)
            // Connected within the window: the wake is settled and no alert follows.
            #expect(try await server.store.deliveryStates([DeviceRef(appID: "chat", deviceID: "phone")]).first?.value.nextDeadline == nil)
            #expect(server.emulator.deliveries(to: Self.token).count == 1)
        }
    }

    /// The report from real pushes, not synthetic records. Two apps, so that each device's
    /// window suits what it must show whatever the machine's load: in `chat` (a long window) a
    /// woken phone comes back; in `mail` (a short one) a woken phone never does and is escalated.
    @Test func theDeliveryReportCountsRealWakesMissesAndEscalations() async throws {
        try await SyncTestServer.with(delivery: true, configure: {
            Self.fast(&$0)
            $0.apps[0].delivery.reconnectWindow = 60
            $0.apps[1].delivery.reconnectWindow = 0.3
        }) { server in
            let mailKey = try await server.store.createAPIKey(appID: "mail", name: "test").secret
            let credential = try await server.device(user: "alice", device: "phone", token: Self.token)
            _ = try await server.device(user: "bob", device: "tablet", token: Self.otherToken, app: "mail")
            try await server.post(to: ["alice"])
            try await server.post(to: ["bob"], key: mailKey)
            _ = try await server.pushes(to: Self.token, count: 1)
            let client = try await server.connect(credential)
            _ = try await client.hello()
            _ = try await server.waitForPush { $0.wake == "observed" }
            // Bob's window ends: his wake is missed and an alert follows (rule 4).
            let bobs = try await server.pushes(to: Self.otherToken, count: 2)
            #expect(bobs.map(\.pushType) == [.background, .alert])
            _ = try await server.waitForPush(app: "mail") { $0.wake == "missed" }

            let chat = try await server.report(key: server.chatKey)
            #expect(chat["pushes"] as? Int == 1)
            let since = try #require(chat["since"] as? String, "an RFC 3339 timestamp, as openapi.yaml says")
            #expect(APIJSON.parseTimestamp(since) != nil)
            #expect(chat["escalations"] as? Int == 0)
            #expect(chat["unreachableDevices"] as? Int == 0)
            #expect(chat["wakeSuccessRate"] as? Double == 1)
            let wake = try #require(Self.kind("wake", in: chat))
            #expect(wake["pushes"] as? Int == 1)
            #expect(wake["connectedWithinWindow"] as? Int == 1)
            #expect(wake["notConnectedWithinWindow"] as? Int == 0)
            let latency = try #require(wake["latencySeconds"] as? [String: Any])
            let observed = try #require(try await server.waitForPush { $0.wake == "observed" }.wakeLatency)
            #expect(abs((latency["max"] as? Double ?? -1) - observed) < 0.002, "the report's latency is the measured one")

            let mail = try await server.report(key: mailKey)
            #expect(mail["pushes"] as? Int == 2)
            #expect(mail["escalations"] as? Int == 1)
            #expect(mail["unreachableDevices"] as? Int == 1)
            #expect(mail["wakeSuccessRate"] as? Double == 0)
            let missed = try #require(Self.kind("wake", in: mail))
            #expect(missed["connectedWithinWindow"] as? Int == 0)
            #expect(missed["notConnectedWithinWindow"] as? Int == 1)
            #expect(Self.kind("unreachable-alert", in: mail)?["pushes"] as? Int == 1)
        }
    }

    static func kind(_ reason: String, in report: [String: Any]) -> [String: Any]? {
        (report["kinds"] as? [[String: Any]])?.first { $0["reason"] as? String == reason }
    }

    @Test func aMissedWakeEscalatesToAlertsUntilTheDeviceConnects() async throws {
        try await SyncTestServer.with(delivery: true, configure: Self.fast) { server in
            let credential = try await server.device(user: "alice", device: "phone", token: Self.token)
            try await server.post(to: ["alice"])
            // The wake, then after the reconnect window an alert that still wakes the app.
            let pushes = try await server.pushes(to: Self.token, count: 2)
            #expect(pushes.map(\.pushType) == [.background, .alert])
            let alert = try Self.json(pushes[1])
            #expect((alert["aps"] as? [String: Any])?["content-available"] as? Int == 1)
            #expect((alert["beckon"] as? [String: Any])?["reason"] as? String == "unreachable-alert")

            // Unreachable: the next message goes out as an alert at once, with no wake first.
            try await server.post(to: ["alice"])
            let third = try await server.pushes(to: Self.token, count: 3)[2]
            #expect(third.pushType == .alert)
            #expect(try await server.store.unreachableDeviceCount(appID: "chat") == 1)

            // It connects: reachable again, and a later message (after a clean close) is a wake.
            let client = try await server.connect(credential)
            _ = try await client.hello()
            _ = try await client.messages(2)
            try await client.send(#"{"type":"ack","upTo":2}"#)
            try await client.send(#"{"type":"bye"}"#)
            _ = try await server.waitForPresence("phone") { !$0.isConnected }
            try await server.waitUntil { try await server.store.unreachableDeviceCount(appID: "chat") == 0 }
            try await server.post(to: ["alice"])
            #expect(try await server.pushes(to: Self.token, count: 4)[3].pushType == .background)
        }
    }

    @Test func aDropWithUnackedMessagesIsPushedAgain() async throws {
        try await SyncTestServer.with(delivery: true, configure: Self.fast) { server in
            let credential = try await server.device(user: "alice", device: "phone", token: Self.token)
            let client = try await server.connect(credential)
            _ = try await client.hello()
            let id = try await server.post(to: ["alice"])
            _ = try await client.messages(1)
            // Received, never acknowledged, and the connection drops (no bye).
            try await client.closeWithoutBye()
            _ = try await server.waitForPresence("phone") { !$0.isConnected }
            let repush = try #require(try await server.pushes(to: Self.token, count: 1).first)
            let beckon = try Self.json(repush)["beckon"] as? [String: Any]
            #expect(beckon?["reason"] as? String == "repush")
            #expect(beckon?["ids"] as? [String] == [id])
        }
    }

    @Test func aCallGoesToTheVoIPTokenOrRingsAsAlerts() async throws {
        // A call timeout long enough for a loaded machine: no call push goes out after it (2 s
        // was once too short with the whole suite running on two cores).
        try await SyncTestServer.with(delivery: true, configure: { Self.fast(&$0); $0.apps[0].delivery.callTimeout = 6 }) { server in
            _ = try await server.device(user: "alice", device: "phone", token: Self.token, voip: Self.voipToken)
            _ = try await server.device(user: "bob", device: "old-phone", token: Self.otherToken)
            let aliceCall = try await server.post(to: ["alice"], kind: "call")
            let voip = try #require(try await server.pushes(to: Self.voipToken, count: 1).first)
            #expect(voip.pushType == .voip)
            #expect(voip.topic == "com.example.chat.voip")
            #expect((try Self.json(voip)["beckon"] as? [String: Any])?["call"] as? String == aliceCall)

            // Without a VoIP token: alerts with collapse id = call id until the timeout, then missed.
            let bobCall = try await server.post(to: ["bob"], kind: "call")
            let rings = try await server.pushes(to: Self.otherToken, count: 3)
            #expect(rings.allSatisfy { $0.pushType == .alert && $0.collapseID == bobCall })
            let last = try await server.waitForDelivery(to: Self.otherToken) {
                (try? Self.json($0)["beckon"] as? [String: Any])?["reason"] as? String == "missed-call"
            }
            #expect(last.collapseID == bobCall)
        }
    }

    @Test func readingOnOneDeviceClearsTheOthers() async throws {
        try await SyncTestServer.with(delivery: true, configure: Self.fast) { server in
            let phone = try await server.device(user: "alice", device: "phone", token: Self.token)
            _ = try await server.device(user: "alice", device: "tablet", token: Self.otherToken)
            let client = try await server.connect(phone)
            _ = try await client.hello()
            let first = try await server.post(to: ["alice"])
            let second = try await server.post(to: ["alice"])
            _ = try await client.messages(2)
            _ = try await server.pushes(to: Self.otherToken, count: 1)  // The tablet's wake.

            // One of two read: a background push tells the tablet which notification to remove.
            try await client.send(#"{"type":"read","ids":["\#(first)"]}"#)
            let clear = try await server.waitForDelivery(to: Self.otherToken) {
                (try? Self.json($0)["beckon"] as? [String: Any])?["clear"] != nil
            }
            #expect(clear.pushType == .background)
            #expect((try Self.json(clear)["beckon"] as? [String: Any])?["clear"] as? [String] == [first])

            // Both read, nothing unread: `{"aps":{"badge":0}}`, which clears every notification
            // even of an app the user killed (seed 000): an alert by type, priority 5, nothing else.
            try await client.send(#"{"type":"read","ids":["\#(second)"]}"#)
            let clearAll = try await server.waitForDelivery(to: Self.otherToken) {
                (try? Self.json($0)["aps"] as? [String: Any])?["badge"] as? Int == 0
            }
            #expect(clearAll.pushType == .alert)
            #expect(clearAll.priority == 5)
            #expect(clearAll.payloadString == #"{"aps":{"badge":0}}"#)
        }
    }

    @Test func aTokenRegisteredAgainAfterThe410sTimestampSurvivesIt() async throws {
        try await SyncTestServer.with(delivery: true, configure: Self.fast) { server in
            // Apple saw this token die (the app was removed)...
            try server.emulator.registerDevice(token: Self.token, bundleID: "com.example.chat")
            try server.emulator.unregisterDevice(token: Self.token)
            try await Task.sleep(for: .milliseconds(20))
            // ...and then the app, reinstalled, registered the same token again.
            _ = try await server.device(user: "alice", device: "phone", token: Self.token)
            try await server.post(to: ["alice"])
            let failed = try await server.waitForPush { $0.state == "failed" }
            #expect(failed.status == 410)
            #expect(try await server.store.device(DeviceRef(appID: "chat", deviceID: "phone"))?.pushToken == Self.token)

            // A token registered before Apple's timestamp is the dead one: it is removed.
            _ = try await server.device(user: "bob", device: "old-phone", token: Self.otherToken)
            try await Task.sleep(for: .milliseconds(20))
            try server.emulator.registerDevice(token: Self.otherToken, bundleID: "com.example.chat")
            try server.emulator.unregisterDevice(token: Self.otherToken)
            try await server.post(to: ["bob"])
            try await server.waitUntil {
                try await server.store.device(DeviceRef(appID: "chat", deviceID: "old-phone"))?.pushToken == nil
            }
        }
    }

    @Test func contentPushesAreSealedForTheDevicesExtension() async throws {
        try await SyncTestServer.with(delivery: true, configure: {
            Self.fast(&$0)
            $0.apps[0].delivery.strategy = .content
        }) { server in
            let key = SymmetricKey(size: .bits256).withUnsafeBytes { Data($0) }
            try await server.store.registerDevice(DeviceRegistration(
                appID: "chat", deviceID: "phone", userID: "alice", bundleID: "com.example.chat", environment: .sandbox,
                pushToken: Self.token, capabilities: DeviceCapabilities(notificationServiceExtension: true),
                contentKey: key))
            let body = #"{"recipients":{"users":["alice"]},"kind":"message","payload":{},"notification":{"title":"Bob","body":"lunch at noon?"}}"#
            let response = try await server.http { client in
                try await client.post("/v1/messages", headers: APITestFixture.headers(bearer: server.chatKey), body: ByteBuffer(string: body))
            }
            #expect(response.status == .accepted)
            let push = try #require(try await server.pushes(to: Self.token, count: 1).first)
            #expect(push.pushType == .alert)
            let payload = try Self.json(push)
            // Apple sees generic text only; the extension opens the real one.
            #expect(!push.payloadString.contains("lunch"))
            #expect((payload["aps"] as? [String: Any])?["mutable-content"] as? Int == 1)
            let sealed = try #require((payload["beckon"] as? [String: Any])?["sealed"] as? String)
            let opened = try ContentSeal.open(sealed, key: key)
            #expect(opened.title == "Bob")
            #expect(opened.body == "lunch at noon?")
        }
    }

    static func json(_ notification: APNSEmulatorNotification) throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: Data(notification.payload)) as? [String: Any])
    }
}

extension SyncTestServer {
    var emulator: APNSEmulator { node!.emulator! }

    /// Registers a device of `chat` with tokens and capabilities (the `wake` strategy needs the
    /// remote-notification background mode); returns its sync credential.
    func device(
        user: String, device: String, token: String?, voip: String? = nil,
        modes: Set<String> = ["remote-notification"], serviceExtension: Bool = false, app: String = "chat"
    ) async throws -> String {
        // `mail` serves production devices only (APITestFixture).
        try await store.registerDevice(DeviceRegistration(
            appID: app, deviceID: device, userID: user, bundleID: "com.example.\(app)",
            environment: app == "mail" ? .production : .sandbox, pushToken: token, voipToken: voip,
            capabilities: DeviceCapabilities(notificationServiceExtension: serviceExtension, backgroundModes: modes)))
        return try await store.issueDeviceCredential(DeviceRef(appID: app, deviceID: device))
    }

    /// `GET /v1/delivery/report` of the key's app, parsed.
    func report(key: String) async throws -> [String: Any] {
        let response = try await http { client in
            try await client.get("/v1/delivery/report", headers: APITestFixture.headers(bearer: key))
        }
        guard response.status == .ok, let body = response.body,
            let report = try JSONSerialization.jsonObject(with: Data(body.readableBytesView)) as? [String: Any]
        else { throw FixtureError.unexpected("report: \(response.status)") }
        return report
    }

    /// Waits until the emulator has accepted at least `count` pushes for the token; returns them.
    func pushes(
        to token: String, count: Int, timeout: Duration = .seconds(20)
    ) async throws -> [APNSEmulatorNotification] {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            let received = emulator.deliveries(to: token)
            if received.count >= count { return received }
            try await Task.sleep(for: .milliseconds(10))
        }
        throw FixtureError.unexpected("\(count) pushes expected, got \(emulator.deliveries(to: token).count)")
    }

    func waitForDelivery(
        to token: String, timeout: Duration = .seconds(20), _ matches: (APNSEmulatorNotification) -> Bool
    ) async throws -> APNSEmulatorNotification {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            if let found = emulator.deliveries(to: token).last(where: matches) { return found }
            try await Task.sleep(for: .milliseconds(10))
        }
        throw FixtureError.unexpected("no matching push: \(emulator.deliveries(to: token).map(\.payloadString))")
    }

    /// Waits until an outbox record of the app matches.
    func waitForPush(
        app: String = "chat", timeout: Duration = .seconds(20), _ matches: (PushRecord) -> Bool
    ) async throws -> PushRecord {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            let records = try await store.pushRecords(appID: app, since: Date(timeIntervalSince1970: 0))
            if let found = records.first(where: matches) { return found }
            try await Task.sleep(for: .milliseconds(10))
        }
        throw FixtureError.unexpected("no matching push record")
    }

    func waitUntil(timeout: Duration = .seconds(20), _ condition: () async throws -> Bool) async throws {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            if try await condition() { return }
            try await Task.sleep(for: .milliseconds(10))
        }
        throw FixtureError.unexpected("condition never held")
    }
}
