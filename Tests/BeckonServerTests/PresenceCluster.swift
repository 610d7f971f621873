@testable import BeckonDelivery
import BeckonProtocol
@testable import BeckonServer
import BeckonStore
import Foundation
import Logging
import Metrics
import NIOConcurrencyHelpers
import TestCapture

/// The planners' side of several nodes (docs/cluster.md), without sockets: each node is a
/// `DeliveryDriver` of its own (with its own planner cache) on one shared store, beside the
/// cluster's session slots. The session events are the ones `SyncHub` and `PostgresCluster` emit
/// (ClusterHubTests checks that they do), each planned on the node and at the moment the test
/// says, so that a race between nodes runs in its bad order on purpose. Time is a hand-moved
/// clock: deadlines fire when the test settles them.
final class PresenceCluster: Sendable {
    static let app = "chat"
    let store: any BeckonStore
    let slots: any SessionSlots
    let gate = PresenceGate()
    let clock: ManualClock
    private let logger: Logger
    private let drivers = NIOLockedValueBox([String: DeliveryDriver]())
    private let dead = NIOLockedValueBox(Set<String>())
    /// The pushes decided so far (taken from the outbox as they are counted).
    private let decided = NIOLockedValueBox([OutboxPush]())

    private init(store: any BeckonStore, slots: any SessionSlots, clock: ManualClock) {
        self.store = store
        self.slots = slots
        self.clock = clock
        var logger = Logger(label: "beckon.presence.test")
        logger.logLevel = .warning
        self.logger = logger
    }

    /// Runs `body` with nodes `node1`…`node3` on a fresh SQLite store, and again on a fresh
    /// PostgreSQL database when `BECKON_TEST_POSTGRES_URL` is set (CI sets it).
    static func withEachStore(_ body: (PresenceCluster) async throws -> Void) async throws {
        TestLogCapture.install()
        let clock = ManualClock()
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("beckon-presence-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let sqlite = try SQLiteStore(location: .file(path: directory.appendingPathComponent("beckon.sqlite").path), now: { clock.now })
        defer { try? sqlite.close() }
        try await run(PresenceCluster(store: sqlite, slots: MemorySessionSlots(), clock: clock), body)

        guard let url = ProcessInfo.processInfo.environment["BECKON_TEST_POSTGRES_URL"] else { return }
        try await withFreshPostgresStore(url: url, clock: clock) { postgres in
            try await run(PresenceCluster(store: postgres, slots: PostgresSessionSlots(store: postgres), clock: clock), body)
        }
    }

    private static func run(_ cluster: PresenceCluster, _ body: (PresenceCluster) async throws -> Void) async throws {
        _ = try await cluster.store.createApp(App(id: app, bundleID: "com.example.chat", teamID: "TEAM123456"))
        for node in ["node1", "node2", "node3"] { try await cluster.start(node) }
        try await body(cluster)
    }

    /// A database of its own, with a migrated store on it (its pool running), dropped afterwards.
    private static func withFreshPostgresStore(
        url: String, clock: ManualClock, _ body: (PostgresStore) async throws -> Void
    ) async throws {
        let name = "beckon_presence_\(UUID().uuidString.prefix(8).lowercased())"
        let admin = try PostgresStore(url: url, logger: Logger(label: "beckon.store.test"))
        try await withThrowingTaskGroup(of: Void.self) { tasks in
            tasks.addTask { await admin.run() }
            defer { tasks.cancelAll() }
            try await admin.execute(unsafeSQL: "CREATE DATABASE \(name)")
            var components = URLComponents(string: url)!
            components.path = "/" + name
            do {
                let store = try PostgresStore(url: components.string!, logger: Logger(label: "beckon.store.test"), now: { clock.now })
                try await withThrowingTaskGroup(of: Void.self) { running in
                    running.addTask { await store.run() }
                    defer { running.cancelAll() }
                    try await store.migrate()
                    try await body(store)
                }
            } catch {
                _ = try? await admin.execute(unsafeSQL: "DROP DATABASE \(name) WITH (FORCE)")
                throw error
            }
            try await admin.execute(unsafeSQL: "DROP DATABASE \(name) WITH (FORCE)")
        }
    }

    // MARK: Nodes

    /// Starts a node: it joins, with an empty planner cache.
    func start(_ node: String) async throws {
        try await slots.join(node)
        let metrics = DeliveryMetrics(factory: MetricsSystem.factory)
        let dispatcher = PushDispatcher(store: store, senders: [:], metrics: metrics, logger: logger)
        let driver = DeliveryDriver(
            store: store, policies: [Self.app: DeliveryPolicy()], bundleIDs: [Self.app: "com.example.chat"],
            dispatcher: dispatcher, metrics: metrics, logger: logger, now: { [clock] in clock.now },
            presence: GatedPresence(node: node, inner: slots.presence, gate: gate))
        drivers.withLockedValue { $0[node] = driver }
    }

    /// The nodes alive, by name.
    var living: [String] { drivers.withLockedValue { $0.keys.sorted() } }

    /// The node stops without its shutdown path (SIGKILL): what it had not planned is lost with its
    /// cache, and its session rows stay until a survivor reaps them.
    func kill(_ node: String) {
        drivers.withLockedValue { $0[node] = nil }
        dead.withLockedValue { _ = $0.insert(node) }
    }

    /// A survivor takes the dead nodes' sessions for ended (`PostgresCluster.keepAlive`); their
    /// drops are planned on it now, or later by the caller (`plan: false`: still queued there).
    @discardableResult
    func reap(by node: String, plan: Bool = true) async throws -> [DeliveryEvent] {
        let now = clock.now
        let events = try await slots.reap(dead.withLockedValue { $0 }).map {
            DeliveryEvent.disconnected($0.device, clean: false, at: now, session: $0.session)
        }
        if plan { await self.plan(events, on: node) }
        return events
    }

    /// One batch on `node`'s planner, saved (and planned again while another node saved first).
    func plan(_ events: [DeliveryEvent], on node: String) async {
        guard !events.isEmpty, let driver = drivers.withLockedValue({ $0[node] }) else { return }
        await driver.plan(events, whileSaving: nil)?.task.value
    }

    // MARK: Devices

    static func ref(_ device: String) -> DeviceRef { DeviceRef(appID: app, deviceID: device) }

    /// A device whose app can be woken: a message to it while it is away is a background push, and
    /// a wake it misses makes it unreachable, alerted (rules 3 and 4).
    func register(_ device: String, user: String) async throws {
        let token = String((device.utf8.map { String(format: "%02x", $0) }.joined() + String(repeating: "0", count: 64)).prefix(64))
        _ = try await store.registerDevice(DeviceRegistration(
            appID: Self.app, deviceID: device, userID: user, bundleID: "com.example.chat", environment: .production,
            pushToken: token, capabilities: DeviceCapabilities(backgroundModes: [DeliveryPolicy.remoteNotificationMode])))
    }

    /// A device's `hello` on `node`: its slot is claimed cluster-wide, then that node's planner
    /// hears of the drop of any session the claim displaced, and of the connection
    /// (`SyncHub.claimed`). The displaced session's own end follows on its node (`end`).
    @discardableResult
    func hello(_ device: String, user: String, on node: String) async throws -> ClusterSession {
        let (session, events) = try await claim(device, user: user, on: node)
        await plan(events, on: node)
        return session
    }

    /// The claim of a `hello` on `node`, and what that node's planner is then told: planned by
    /// `hello`, or later by the caller (still queued there, behind a backlog).
    func claim(_ device: String, user: String, on node: String) async throws -> (ClusterSession, [DeliveryEvent]) {
        let session = ClusterSession(
            device: Self.ref(device), role: .app, userID: user, node: node, session: "\(node)-\(UUID().uuidString.prefix(8))")
        let displaced = try await slots.claim(session, at: clock.now)
        var events: [DeliveryEvent] = displaced.isEmpty ? [] : [.disconnected(session.device, clean: false, at: clock.now)]
        events.append(.connected(session.device, role: .app, at: clock.now))
        return (session, events)
    }

    /// The session ended (`bye` when clean): its slot is released, then its node's planner hears of
    /// it, named, to check that no newer session holds the device (`SyncHub.unregister`).
    func end(_ session: ClusterSession, clean: Bool) async throws {
        try await slots.release(session.device, session: session.session)
        await plan([.disconnected(session.device, clean: clean, at: clock.now, session: session.session)], on: session.node)
    }

    /// A message to `user` posted on `node`; returns its sequence in the user's mailbox.
    @discardableResult
    func post(to user: String, via node: String) async throws -> Int64 {
        let appended = try await store.appendMessages(appID: Self.app, [
            NewMessage(recipients: [user], payload: Data(#"{"text":"hi"}"#.utf8))
        ])[0]
        await plan([.messageAppended(appended.message, users: [UserRef(appID: Self.app, userID: user)])], on: node)
        return appended.positions[0].sequence
    }

    /// The session read its mailbox live and acknowledged up to `sequence` (`SyncHub.recordAck`).
    func ack(_ session: ClusterSession, upTo sequence: Int64) async throws {
        _ = try await store.ack(device: session.device, upTo: sequence)
        await plan([.acknowledged(session.device, at: clock.now)], on: session.node)
    }

    /// Messages flowing: one posted on each node, each taken live and acknowledged by the session.
    func exchange(_ session: ClusterSession, via nodes: [String]) async throws {
        for node in nodes {
            try await ack(session, upTo: try await post(to: session.userID, via: node))
        }
    }

    // MARK: Time and what it decided

    /// Lets a long time pass (every reconnect window, re-push and owed alert of the default
    /// policy), firing due deadlines on `nodes` (every living node) in turn.
    func settle(on nodes: [String]? = nil) async throws {
        let nodes = nodes ?? living
        for step in 0..<8 {
            clock.advance(by: 300)
            let now = clock.now
            let due = try await store.claimDueDeliveryStates(before: now, limit: 1_000, leaseUntil: now.addingTimeInterval(30))
            await plan(due.map { .deadline($0) }, on: nodes[step % nodes.count])
        }
    }

    /// Every push decided for `device` so far.
    func pushes(to device: String) async throws -> [OutboxPush] {
        let taken = try await store.claimPushes(
            appID: Self.app, before: .distantFuture, limit: 10_000, leaseUntil: .distantFuture)
        return decided.withLockedValue { decided in
            decided += taken
            return decided.filter { $0.device == Self.ref(device) }
        }
    }

    /// Whether the device's saved planner believes it connected.
    func savedAsConnected(_ device: String) async throws -> Bool {
        try await store.deliveryStates([Self.ref(device)])[Self.ref(device)]?.connected ?? false
    }
}
