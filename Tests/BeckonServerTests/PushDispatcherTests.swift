import BeckonProtocol
@testable import BeckonServer
import BeckonNode
import Prometheus
import APNSEmulator
@testable import BeckonDelivery
import BeckonStore
import Foundation
import Hummingbird
import HummingbirdTesting
import Logging
import ServiceLifecycle
import Testing

/// The push outbox's promises against the real store and the APNs emulator.
@Suite struct PushDispatcherTests {
    static let token = String(repeating: "d4", count: 32)

    @Test func aPushDecidedBeforeACrashIsSentAfterTheRestart() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("beckon-outbox-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let path = directory.appendingPathComponent("beckon.sqlite").path
        let configuration = APITestFixture.configuration()

        // The process that died: it decided a wake, saved it, claimed it for sending, and was
        // killed before recording any answer.
        let before = try SQLiteStore(path: path)
        try await BeckonAPI(store: before, configuration: configuration).declareApps()
        try await before.registerDevice(DeviceRegistration(
            appID: "chat", deviceID: "phone", userID: "alice", bundleID: "com.example.chat", environment: .sandbox,
            pushToken: Self.token, capabilities: DeviceCapabilities(backgroundModes: ["remote-notification"])))
        var planner = DevicePlanner()
        let message = PlannedMessage(id: "m1", kind: .message, urgency: .normal, hints: nil, expiresAt: nil, unreadCount: 1)
        let decided = planner.messageArrived(
            message, device: PlannerDevice(hasRemoteToken: true, capabilities: DeviceCapabilities(backgroundModes: ["remote-notification"])),
            now: Date())
        guard case .send(let push) = decided.first else { throw FixtureError.unexpected("no push decided: \(decided)") }
        let id = push.id.uuidString.lowercased()
        try await before.saveDelivery(DeliveryBatch(pushes: [OutboxPush(
            device: DeviceRef(appID: "chat", deviceID: "phone"), tokenKind: .remote, reason: push.reason,
            strategy: push.strategy, notification: try push.rendered(bundleID: "com.example.chat"), messageCount: 1,
            createdAt: Date())]))
        #expect(try await before.claimPushes(appID: "chat", before: Date(), limit: 10, leaseUntil: Date() + 300).map(\.id) == [id])
        try before.close()

        // The restart: the claim died with the process, and the push goes out.
        try await Self.withNode(path: path, configuration: configuration) { _, node in
            let push = try await Self.firstPush(node)
            #expect(push.apnsID == id)
        }
    }

    /// Rule 5 across a crash: a device connected when its lone node was killed, holding an
    /// unacknowledged message, is pushed again after the restart, although no session ever ended to
    /// tell its planner.
    @Test func aDeviceConnectedWhenTheNodeDiedIsPushedAgainAfterTheRestart() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("beckon-restart-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let path = directory.appendingPathComponent("beckon.sqlite").path
        var configuration = APITestFixture.configuration()
        configuration.apps[0].delivery.repushInitialDelay = 0.2
        let device = DeviceRef(appID: "chat", deviceID: "phone")

        // The process that died: the device was connected, got a message, had not acked it.
        let before = try SQLiteStore(path: path)
        try await BeckonAPI(store: before, configuration: configuration).declareApps()
        try await before.registerDevice(DeviceRegistration(
            appID: "chat", deviceID: "phone", userID: "alice", bundleID: "com.example.chat", environment: .sandbox,
            pushToken: Self.token, capabilities: DeviceCapabilities(backgroundModes: ["remote-notification"])))
        let message = try #require(try await before.appendMessages(appID: "chat", [NewMessage(recipients: ["alice"])]).first)
        var planner = DevicePlanner(policy: configuration.apps[0].delivery)
        _ = planner.connected(now: Date())
        try await before.saveDelivery(DeliveryBatch(states: [DeliveryState(
            device: device, planner: try JSONEncoder().encode(planner), nextDeadline: nil, unreachable: false,
            connected: planner.isConnected)]))
        #expect(try await before.devicesSavedAsConnected() == [device])
        try before.close()

        try await Self.withNode(path: path, configuration: configuration) { store, node in
            let push = try await Self.firstPush(node)
            let payload = try #require(try JSONSerialization.jsonObject(with: Data(push.payload)) as? [String: Any])
            let beckon = payload["beckon"] as? [String: Any]
            #expect(beckon?["reason"] as? String == "repush")
            #expect(beckon?["ids"] as? [String] == [message.message.id])
            #expect(try await store.devicesSavedAsConnected() == [], "the planner now knows the device is gone")
        }
    }

    /// A send APNs never answers does not hold a stopping node for the client's 30 s deadline:
    /// delivery stops `shutdown.grace-seconds` after its shutdown began, and the push, still in
    /// the outbox, goes out after the restart.
    @Test func shutdownKeepsItsGraceWithASendHungAndThePushLeavesAfterTheRestart() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("beckon-hung-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let path = directory.appendingPathComponent("beckon.sqlite").path
        var configuration = APITestFixture.configuration()
        configuration.shutdownGraceSeconds = 1
        configuration.apps[0].delivery.strategy = .content

        let stopped = try await Self.withNode(path: path, configuration: configuration) { store, node in
            try await store.registerDevice(DeviceRegistration(
                appID: "chat", deviceID: "phone", userID: "alice", bundleID: "com.example.chat", environment: .sandbox,
                pushToken: Self.token))
            let emulator = try #require(node.emulator)
            emulator.neverRespond()
            _ = try await store.appendMessages(appID: "chat", [NewMessage(recipients: ["alice"])])
            node.delivery.events.submit(.messageAppended(
                try #require(try await store.messages(for: UserRef(appID: "chat", userID: "alice"), after: 0, limit: 1).first?.message),
                users: [UserRef(appID: "chat", userID: "alice")]))
            let deadline = ContinuousClock.now + .seconds(20)
            while emulator.counters.unanswered == 0, ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(10)) }
            #expect(emulator.counters.unanswered == 1, "the send is hung")
        }
        // Far from the 30 s a hung send would hold it, with room for a loaded machine (6.1 s was
        // seen with the whole suite running on two cores).
        #expect(stopped < .seconds(20), "stopped after \(stopped) with a grace of 1 s (the APNs deadline is 30 s)")

        try await Self.withNode(path: path, configuration: configuration) { _, node in
            _ = try await Self.firstPush(node)
            let emulator = try #require(node.emulator)
            #expect(emulator.deliveries(to: Self.token).count == 1, "the hung push is sent after the restart")
        }
    }

    /// A node on the SQLite file at `path` (a restarted process), run while `body` runs, then
    /// stopped gracefully; returns how long the stop took.
    @discardableResult
    static func withNode(
        path: String, configuration given: BeckonServerConfiguration,
        _ body: @escaping @Sendable (SQLiteStore, BeckonNode) async throws -> Void
    ) async throws -> Duration {
        var configuration = given
        configuration.http.port = 0
        var logger = Logger(label: "beckon.outbox.test")
        logger.logLevel = .critical
        let store = try SQLiteStore(path: path)
        try await BeckonAPI(store: store, configuration: configuration).declareApps()
        let node = try await BeckonNode.assemble(
            configuration: configuration, store: store, metrics: PrometheusCollectorRegistry(), logger: logger,
            tick: .milliseconds(20))
        let group = ServiceGroup(configuration: .init(services: [node], logger: logger))
        var stopping = ContinuousClock.now
        try await withThrowingTaskGroup(of: Void.self) { tasks in
            tasks.addTask { try await group.run() }
            try await body(store, node)
            stopping = ContinuousClock.now
            await group.triggerGracefulShutdown()
            try await tasks.waitForAll()
        }
        try store.close()
        return ContinuousClock.now - stopping
    }

    /// The first push the node's emulator accepted for `token`; a deadline, not a wait: it
    /// returns as soon as the push is there (20 s is ample under CI load).
    static func firstPush(_ node: BeckonNode) async throws -> APNSEmulatorNotification {
        let emulator = try #require(node.emulator)
        let deadline = ContinuousClock.now + .seconds(20)
        while emulator.deliveries(to: token).isEmpty, ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(10))
        }
        return try #require(emulator.deliveries(to: token).first)
    }

    @Test func badDeviceTokenIsTriedInTheOtherEnvironmentBeforeTheTokenIsDropped() async throws {
        try await SyncTestServer.with(delivery: true) { server in
            // A production token: the (sandbox) emulator answers BadDeviceToken, in both tries.
            try server.emulator.registerDevice(token: Self.token, bundleID: "com.example.chat", environment: .production)
            _ = try await server.device(user: "alice", device: "phone", token: Self.token)
            try await server.post(to: ["alice"])
            try await server.waitUntil {
                try await server.store.device(DeviceRef(appID: "chat", deviceID: "phone"))?.pushToken == nil
            }
            #expect(server.emulator.counters.byReason["BadDeviceToken"] == 2)
            let record = try await server.waitForPush { $0.state == "failed" }
            #expect(record.status == 400)
        }
    }

    @Test func aTokenForAnotherTopicFlagsTheDeviceUntilItRegistersAgain() async throws {
        try await SyncTestServer.with(delivery: true) { server in
            try server.emulator.registerDevice(token: Self.token, bundleID: "com.example.other")
            _ = try await server.device(user: "alice", device: "phone", token: Self.token)
            try await server.post(to: ["alice"])
            let ref = DeviceRef(appID: "chat", deviceID: "phone")
            try await server.waitUntil { try await server.store.device(ref)?.pushProblem == "DeviceTokenNotForTopic" }
            #expect(try await server.store.device(ref)?.pushToken == Self.token)  // Kept: the app must fix it.
            _ = try await server.device(user: "alice", device: "phone", token: Self.token)
            #expect(try await server.store.device(ref)?.pushProblem == nil)
        }
    }

    @Test func aDecidedPushGoesStraightToTheSenderAndWhatDoesNotFitWaitsInTheOutbox() async throws {
        let registry = PrometheusCollectorRegistry()
        try await SyncTestServer.with(
            delivery: true, metricsFactory: PrometheusMetricsFactory(registry: registry), configure: { $0.delivery.sendsPerApp = 1 }
        ) { server in
            // One at a time, while the app has room: each is handed over as it is saved, no claim.
            for index in 0..<3 {
                let token = String(repeating: "c\(index)", count: 32)
                _ = try await server.device(user: "quick\(index)", device: "quick-phone\(index)", token: token)
                try await server.post(to: ["quick\(index)"])
                _ = try await server.pushes(to: token, count: 1, timeout: .seconds(5))
            }
            let handedOver = { Self.metric(registry, #"beckon_outbox_taken_total{way="handed_over"}"#) ?? 0 }
            #expect(handedOver() >= 2, "the first may have waited for the start-up claim")

            // Ten pushes for an app that holds eight (one slot, eight held per slot with the
            // default lease), whose sends hang: eight are handed over; two stay pending in the
            // outbox, due, for whoever claims them.
            let hung = (0..<10).map { String(format: "e%02d", $0) + String(repeating: "e", count: 61) }
            for (index, token) in hung.enumerated() {
                server.emulator.neverRespond(deviceToken: token)
                _ = try await server.device(user: "slow\(index)", device: "slow-phone\(index)", token: token)
            }
            let before = handedOver()
            try await server.post(to: (0..<10).map { "slow\($0)" })
            try await server.waitUntil { handedOver() >= before + 8 }
            #expect(handedOver() == before + 8)
            let due = try await server.store.claimPushes(appID: "chat", before: Date(), limit: 20, leaseUntil: Date() + 300)
            #expect(due.count == 2)
        }
    }

    static func metric(_ registry: PrometheusCollectorRegistry, _ name: String) -> Double? {
        String(decoding: registry.emitToBuffer(), as: UTF8.self).split(separator: "\n")
            .first { $0.hasPrefix(name + " ") }
            .flatMap { Double($0.split(separator: " ").last ?? "") }
    }

    @Test func anAppWhosePushesHangCannotHoldUpAnotherApp() async throws {
        try await SyncTestServer.with(delivery: true, configure: { $0.delivery.sendsPerApp = 2 }) { server in
            // chat's pushes get no answer at all (a broken route), more of them than its slots.
            let chatTokens = (1...4).map { String(repeating: "e\($0)", count: 32) }
            for (index, token) in chatTokens.enumerated() {
                server.emulator.neverRespond(deviceToken: token)
                _ = try await server.device(user: "user\(index)", device: "phone\(index)", token: token)
            }
            try await server.post(to: (0..<4).map { "user\($0)" })
            try await server.waitUntil { server.emulator.counters.requests >= 2 }

            // mail's push still goes out at once.
            let mailToken = String(repeating: "f1", count: 32)
            try await server.store.registerDevice(DeviceRegistration(
                appID: "mail", deviceID: "laptop", userID: "bob", bundleID: "com.example.mail", environment: .production,
                pushToken: mailToken, capabilities: DeviceCapabilities(backgroundModes: ["remote-notification"])))
            let mailKey = try await server.store.createAPIKey(appID: "mail", name: "test").secret
            let body = #"{"recipients":{"users":["bob"]},"kind":"message","payload":{}}"#
            let response = try await server.http { client in
                try await client.post("/v1/messages", headers: APITestFixture.headers(bearer: mailKey), body: ByteBuffer(string: body))
            }
            #expect(response.status == .accepted)
            _ = try await server.pushes(to: mailToken, count: 1, timeout: .seconds(5))
            // chat never had more than its two slots in flight.
            #expect(server.emulator.counters.unanswered <= 2)
        }
    }
}
