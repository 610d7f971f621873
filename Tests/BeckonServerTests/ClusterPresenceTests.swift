import BeckonStore
import Foundation
import Testing

@testable import BeckonServer

/// A device whose newest session is live on some node is never planned as disconnected, whatever
/// order the nodes' connects, drops, reaps and cache loads take (docs/cluster.md, "One session per
/// device and role, cluster-wide"). Each test moves a session between nodes (a `bye`, a
/// replacement, a node's death and restart), drives the nodes' planning in the order that could
/// lose the connection, lets messages flow to the live session (each acknowledged), then lets every
/// deadline pass: not one push may have gone to the device.
@Suite struct ClusterPresenceTests {
    /// After it all, the device is live and has every message: nothing was pushed, and its planner
    /// knows it is connected.
    static func expectNothingPushed(_ cluster: PresenceCluster, _ session: ClusterSession) async throws {
        try await cluster.exchange(session, via: cluster.living)
        try await cluster.settle()
        let pushes = try await cluster.pushes(to: session.device.deviceID)
        #expect(pushes.map(\.reason.rawValue) == [], "pushes to a live device that acknowledged everything")
        #expect(try await cluster.savedAsConnected(session.device.deviceID))
    }

    /// A `bye` on node 1 and a `hello` on node 2, whose cache still holds the planner it saved
    /// while the device was connected on node 1: the connection changes nothing in that planner,
    /// yet node 1 saved the drop since.
    @Test func aHelloOnANodeWhoseCacheStillHasTheDeviceConnectedFollowsTheDropSavedElsewhere() async throws {
        try await PresenceCluster.withEachStore { cluster in
            try await cluster.register("phone", user: "alice")
            let first = try await cluster.hello("phone", user: "alice", on: "node1")
            try await cluster.exchange(first, via: ["node1", "node2", "node3"])
            try await cluster.end(first, clean: true)
            #expect(try await cluster.savedAsConnected("phone") == false, "the bye was planned")

            let second = try await cluster.hello("phone", user: "alice", on: "node2")
            try await Self.expectNothingPushed(cluster, second)
        }
    }

    /// How the connecting node reads the planner that the dropping node is about to save over.
    enum Order: String, CaseIterable, Sendable, CustomTestStringConvertible {
        /// Node 2 plans and saves the connection while node 1 holds its drop, checked before the
        /// claim, unsaved.
        case connectionPlannedWhileTheDropWaits
        /// Node 2 reads the planner, then node 1 saves the drop, then node 2 saves.
        case dropSavedWhileTheConnectionIsPlanned
        var testDescription: String { rawValue }
    }

    /// A `bye` on node 1 whose drop is checked against the slots before the `hello` on node 2
    /// claims the device, and saved after node 2 read the planner.
    @Test(arguments: Order.allCases, [false, true])
    func aDropCheckedBeforeTheNewSessionsClaimIsNotSavedOverItsConnection(order: Order, cachedOnNode2: Bool) async throws {
        try await PresenceCluster.withEachStore { cluster in
            try await cluster.register("phone", user: "alice")
            let first = try await cluster.hello("phone", user: "alice", on: "node1")
            // Node 1 planned last, so the drop it plans from its cache meets no newer version.
            try await cluster.exchange(first, via: cachedOnNode2 ? ["node2", "node1"] : ["node1"])

            let drop = cluster.gate.hold(.connectedElsewhere, of: first.device, on: "node1")
            let bye = Task { try await cluster.end(first, clean: true) }
            await drop.reached()  // Node 1 found no other session: none has claimed the device yet.
            let second: ClusterSession
            switch order {
            case .connectionPlannedWhileTheDropWaits:
                second = try await cluster.hello("phone", user: "alice", on: "node2")
                drop.release()
                try await bye.value
            case .dropSavedWhileTheConnectionIsPlanned:
                let read = cluster.gate.hold(.mayBeConnected, of: first.device, on: "node2")
                let hello = Task { try await cluster.hello("phone", user: "alice", on: "node2") }
                await read.reached()  // Node 2 read the planner: connected.
                drop.release()
                try await bye.value
                read.release()
                second = try await hello.value
            }
            try await Self.expectNothingPushed(cluster, second)
        }
    }

    /// A newer session on node 2 replaces the one on node 1; the older one's end is planned on
    /// node 1 afterwards, from a cache that still has the device connected.
    @Test func aReplacedSessionsLateEndIsNoDrop() async throws {
        try await PresenceCluster.withEachStore { cluster in
            try await cluster.register("phone", user: "alice")
            let first = try await cluster.hello("phone", user: "alice", on: "node1")
            try await cluster.exchange(first, via: ["node1", "node2", "node3"])
            let second = try await cluster.hello("phone", user: "alice", on: "node2")
            try await cluster.exchange(second, via: ["node3"])
            try await cluster.end(first, clean: false)
            // And back to node 1, which replaces node 2's session in turn.
            let third = try await cluster.hello("phone", user: "alice", on: "node1")
            try await cluster.end(second, clean: false)
            try await Self.expectNothingPushed(cluster, third)
        }
    }

    /// A `bye` on node 1 and a `hello` on node 3, whose planner is behind: the connection is
    /// claimed, its `connected` still queued on node 3, while node 2 plans a message to the device
    /// (which the session takes live) and, once every reconnect window is over, its deadlines.
    @Test func aConnectionStillQueuedOnItsNodeCountsForTheOthers() async throws {
        try await PresenceCluster.withEachStore { cluster in
            try await cluster.register("phone", user: "alice")
            let first = try await cluster.hello("phone", user: "alice", on: "node1")
            try await cluster.exchange(first, via: ["node1", "node2", "node3"])
            try await cluster.end(first, clean: true)

            let (second, queued) = try await cluster.claim("phone", user: "alice", on: "node3")
            let sequence = try await cluster.post(to: "alice", via: "node2")
            _ = try await cluster.store.ack(device: second.device, upTo: sequence)  // Its ack is queued behind too.
            try await cluster.settle(on: ["node2"])
            await cluster.plan(queued + [.acknowledged(second.device, at: cluster.clock.now)], on: "node3")
            try await Self.expectNothingPushed(cluster, second)
        }
    }

    /// Node 2 dies holding the session; node 1 reaps it and checks the drop before the device
    /// resumes on node 3 (inside the reconnect window), and saves it after node 3 planned the
    /// connection from its cache.
    @Test func aResumeOnASurvivorIsNotUndoneByTheReapOfTheDeadNodesSession() async throws {
        try await PresenceCluster.withEachStore { cluster in
            try await cluster.register("phone", user: "alice")
            let first = try await cluster.hello("phone", user: "alice", on: "node2")
            // Node 1 planned last: its drop meets no newer version; node 3's cache is behind.
            try await cluster.exchange(first, via: ["node3", "node2", "node1"])
            cluster.kill("node2")

            let drop = cluster.gate.hold(.connectedElsewhere, of: first.device, on: "node1")
            let reap = Task { try await cluster.reap(by: "node1") }
            await drop.reached()
            let second = try await cluster.hello("phone", user: "alice", on: "node3")
            drop.release()
            _ = try await reap.value
            try await Self.expectNothingPushed(cluster, second)
        }
    }

    /// Node 2 dies holding the session and is reaped; before the reap's drop is planned, a message
    /// planned on node 3 finds the planner saved as connected and no session anywhere (the fix-up
    /// in `PlanningStep.loadStates`), and saves after the device resumed on the restarted node 2
    /// and acknowledged that very message.
    @Test func aResumeOnTheRestartedNodeIsNotUndoneByAPlannerThatFoundNoSession() async throws {
        try await PresenceCluster.withEachStore { cluster in
            try await cluster.register("phone", user: "alice")
            let first = try await cluster.hello("phone", user: "alice", on: "node2")
            try await cluster.exchange(first, via: ["node1", "node2", "node3"])
            cluster.kill("node2")
            let drops = try await cluster.reap(by: "node1", plan: false)
            try await cluster.start("node2-restarted")

            let fixUp = cluster.gate.hold(.mayBeConnected, of: first.device, on: "node3")
            let message = Task { try await cluster.post(to: "alice", via: "node3") }
            await fixUp.reached()  // Node 3: connected as saved, but no node holds a session.
            let second = try await cluster.hello("phone", user: "alice", on: "node2-restarted")
            let sequence = try await cluster.store.lastSequence(of: UserRef(appID: PresenceCluster.app, userID: "alice"))
            try await cluster.ack(second, upTo: sequence)  // The resumed session read it live.
            fixUp.release()
            _ = try await message.value
            await cluster.plan(drops, on: "node1")
            try await Self.expectNothingPushed(cluster, second)
        }
    }
}
