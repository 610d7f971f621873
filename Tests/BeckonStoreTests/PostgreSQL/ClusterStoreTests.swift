import BeckonProtocol
import Foundation
import Testing

@testable import BeckonStore

/// What several nodes share in PostgreSQL besides the data (docs/cluster.md): live nodes, the
/// session slots, the mailbox's change times and the hint channel. PostgreSQL only.
@Suite(.enabled(if: postgresTestURL != nil, "set BECKON_TEST_POSTGRES_URL (scripts/postgres.sh start)"))
struct ClusterStoreTests {
    static let phone = DeviceRef(appID: "chat", deviceID: "phone")

    static func withCluster(clock: TestClock = TestClock(), _ body: (PostgresStore) async throws -> Void) async throws {
        try await withFreshPostgresDatabase(url: postgresTestURL!, clock: clock) { store in
            let store = try #require(store as? PostgresStore)
            try await store.createApp(.fixture())
            _ = try await store.registerDevice(.fixture(device: "phone", user: "alice", pushToken: token("a")))
            try await body(store)
        }
    }

    static func session(_ role: SyncRole, node: String, _ id: String) -> ClusterSession {
        ClusterSession(device: phone, role: role, userID: "alice", node: node, session: id)
    }

    @Test func aNewerSessionAnywhereTakesTheSlotAndTheAppPreemptsTheExtension() async throws {
        try await Self.withCluster { store in
            let at = Date(timeIntervalSince1970: 1_000)
            let first = try await store.claimSession(Self.session(.extension, node: "a", "s1"), at: at)
            #expect(first == SessionClaimResult(accepted: true, displaced: []))
            // A second extension session on node b replaces the first (4001 there).
            let second = try await store.claimSession(Self.session(.extension, node: "b", "s2"), at: at)
            #expect(second.displaced == [Self.session(.extension, node: "a", "s1")])
            // The app on node c preempts the extension (4002 on b).
            let app = try await store.claimSession(Self.session(.app, node: "c", "s3"), at: at)
            #expect(app == SessionClaimResult(accepted: true, displaced: [Self.session(.extension, node: "b", "s2")]))
            // While the app holds the device, an extension is refused, wherever it connects.
            #expect(try await store.claimSession(Self.session(.extension, node: "a", "s4"), at: at).accepted == false)
            #expect(try await store.hasSession(Self.phone))
            #expect(try await store.hasSession(Self.phone, besides: "s3") == false)

            // A replaced session's end does not free the newer one's slot.
            try await store.releaseSession(Self.phone, session: "s2")
            #expect(try await store.hasSession(Self.phone))
            try await store.releaseSession(Self.phone, session: "s3")
            #expect(try await store.hasSession(Self.phone) == false)
        }
    }

    /// What a planner saved as disconnected asks: which devices a node holds a claimed session
    /// of, with its role and when it connected (docs/cluster.md, "A connection is always saved").
    @Test func theLiveSessionsOfDevicesAreTheirClaimedOnes() async throws {
        try await Self.withCluster { store in
            let tablet = DeviceRef(appID: "chat", deviceID: "tablet")
            let at = Date(timeIntervalSince1970: 1_000)
            #expect(try await store.liveSessions([]).isEmpty)
            _ = try await store.claimSession(Self.session(.extension, node: "a", "s1"), at: at)
            #expect(try await store.liveSessions([Self.phone, tablet]).mapValues(\.role) == [Self.phone: .extension])
            _ = try await store.claimSession(Self.session(.app, node: "b", "s2"), at: at.addingTimeInterval(1))
            let live = try await store.liveSessions([Self.phone, tablet])
            #expect(live.mapValues(\.role) == [Self.phone: .app])
            #expect(live[Self.phone]?.connectedAt == at.addingTimeInterval(1))
            try await store.releaseSession(Self.phone, session: "s2")
            #expect(try await store.liveSessions([Self.phone, tablet]).isEmpty)
        }
    }

    @Test func aSilentNodeIsReapedOnceAndLearnsItWhenItComesBack() async throws {
        let clock = TestClock()
        try await Self.withCluster(clock: clock) { store in
            #expect(try await store.heartbeat(node: "a") == false, "a first heartbeat joins")
            #expect(try await store.heartbeat(node: "a"))
            _ = try await store.heartbeat(node: "b")
            _ = try await store.claimSession(Self.session(.app, node: "a", "s1"), at: clock.now)
            // A session whose node has no row (it never joined, or left) is reaped too.
            _ = try await store.claimSession(
                ClusterSession(device: DeviceRef(appID: "chat", deviceID: "ghost"), role: .app, userID: "bob", node: "gone", session: "s9"),
                at: clock.now)

            clock.advance(by: 20)
            #expect(try await store.heartbeat(node: "b"))
            #expect(try await store.liveNodeCount(since: clock.now.addingTimeInterval(-10)) == 1)
            let reaped = try await store.reapDeadNodes(heartbeatBefore: clock.now.addingTimeInterval(-10))
            #expect(Set(reaped.map(\.session)) == ["s1", "s9"])
            #expect(try await store.reapDeadNodes(heartbeatBefore: clock.now.addingTimeInterval(-10)).isEmpty, "once")
            #expect(try await store.hasSession(Self.phone) == false)
            #expect(try await store.heartbeat(node: "a") == false, "node a learns it was taken for dead")
        }
    }

    @Test func theUsersOfANodesSessionsWhoseMailboxChangedAreFound() async throws {
        let clock = TestClock()
        try await Self.withCluster(clock: clock) { store in
            _ = try await store.registerDevice(.fixture(device: "tablet", user: "bob", pushToken: token("b")))
            _ = try await store.claimSession(Self.session(.app, node: "a", "s1"), at: clock.now)
            _ = try await store.claimSession(
                ClusterSession(device: DeviceRef(appID: "chat", deviceID: "tablet"), role: .app, userID: "bob", node: "b", session: "s2"),
                at: clock.now)
            let before = clock.now
            clock.advance(by: 1)
            _ = try await store.appendMessages(appID: "chat", [NewMessage(recipients: ["alice", "bob"], payload: text("hi"))])
            #expect(try await store.changedUsers(onNode: "a", since: before) == [UserRef(appID: "chat", userID: "alice")])
            #expect(try await store.changedUsers(onNode: "a", since: clock.now.addingTimeInterval(1)).isEmpty)
        }
    }

    @Test func aHintReachesEveryListener() async throws {
        try await Self.withCluster { store in
            let (received, continuation) = AsyncStream.makeStream(of: String.self)
            let (ready, readyContinuation) = AsyncStream.makeStream(of: Void.self)
            let listener = Task {
                try await store.listen(channel: "beckon_test") { readyContinuation.yield() } receive: { continuation.yield($0) }
            }
            defer { listener.cancel() }
            var readyIterator = ready.makeAsyncIterator()
            await readyIterator.next()
            try await store.notify(channel: "beckon_test", payload: "wake alice")
            var iterator = received.makeAsyncIterator()
            #expect(await iterator.next() == "wake alice")
        }
    }

    @Test func aNodeRefusesADatabaseANewerBeckonMigrated() async throws {
        try await Self.withCluster { store in
            try await store.execute(unsafeSQL: "INSERT INTO beckon_migration (version, applied_at) VALUES (99, 0)")
            await #expect(throws: BeckonStoreError.schemaTooNew) { try await store.migrate() }
        }
    }
}
