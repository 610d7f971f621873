import BeckonProtocol
@testable import BeckonServer
import BeckonStore
import Foundation
import NIOConcurrencyHelpers
import Testing

/// The hub's side of several nodes (docs/cluster.md), against a scripted cluster: what it tells
/// the other nodes, what it does with what they tell it, and when the planner hears of sessions.
@Suite struct ClusterHubTests {
    static let phone = DeviceRef(appID: "chat", deviceID: "phone")

    /// Records what the hub publishes; answers claims as the test says.
    final class ScriptedLink: ClusterLink, Sendable {
        let nodeID = "node-a"
        private let state = NIOLockedValueBox<(published: [ClusterHint], claims: [ClusterSession], released: [String])>(([], [], []))
        private let answer: @Sendable (ClusterSession) -> SessionClaimResult

        init(answer: @escaping @Sendable (ClusterSession) -> SessionClaimResult = { _ in SessionClaimResult(accepted: true, displaced: []) }) {
            self.answer = answer
        }

        var published: [ClusterHint] { state.withLockedValue { $0.published } }
        var claims: [ClusterSession] { state.withLockedValue { $0.claims } }
        var released: [String] { state.withLockedValue { $0.released } }

        func publish(_ hint: ClusterHint) { state.withLockedValue { $0.published.append(hint) } }
        func claim(_ session: ClusterSession, at date: Date) async -> SessionClaimResult {
            state.withLockedValue { $0.claims.append(session) }
            return answer(session)
        }
        func release(_ device: DeviceRef, session: String) async { state.withLockedValue { $0.released.append(session) } }
    }

    static func until(_ condition: @Sendable () async -> Bool) async throws {
        for _ in 0..<500 where !(await condition()) { try await Task.sleep(for: .milliseconds(10)) }
        #expect(await condition())
    }

    @Test func aSessionIsClaimedClusterWideBeforeThePlannerHearsOfItAndReleasedWhenItEnds() async throws {
        let link = ScriptedLink()
        try await SyncTestServer.with(hub: SyncHub(cluster: link)) { server in
            let events = SyncEventLog(server.hub)
            let client = try await server.connect(try await server.device(user: "alice", device: "phone"))
            let welcome = try await client.hello()
            try await events.waitFor { if case .connected(Self.phone, .app, _) = $0 { true } else { false } }
            #expect(link.claims.map(\.device) == [Self.phone])
            #expect(link.claims.first?.node == "node-a" && link.claims.first?.userID == "alice")
            #expect(link.claims.first?.session == welcome["sessionId"]?.string)

            try await client.send(#"{"type":"bye"}"#)
            try await events.waitFor {
                // Named, so the planner can check that no newer session holds the device.
                if case .disconnected(Self.phone, clean: true, _, let session?) = $0 { session == link.claims.first?.session } else { false }
            }
            #expect(link.released == link.claims.map(\.session))
        }
    }

    @Test func aSessionOnAnotherNodeThatThisOneDisplacesIsClosedThereAndTheTakeoverIsADropAndAConnection() async throws {
        let link = ScriptedLink { claim in
            SessionClaimResult(accepted: true, displaced: [ClusterSession(
                device: claim.device, role: .app, userID: claim.userID, node: "node-b", session: "older")])
        }
        try await SyncTestServer.with(hub: SyncHub(cluster: link)) { server in
            let events = SyncEventLog(server.hub)
            let client = try await server.connect(try await server.device(user: "alice", device: "phone"))
            _ = try await client.hello()
            try await events.waitFor { if case .connected(Self.phone, .app, _) = $0 { true } else { false } }
            #expect(link.published == [.close(node: "node-b", app: "chat", device: "phone", session: "older", code: 4001)])
            let kinds = events.recorded.map { event -> String in
                switch event {
                case .disconnected(_, clean: false, _, nil): "drop"
                case .connected: "connected"
                default: "other"
                }
            }
            #expect(kinds == ["drop", "connected"])
        }
    }

    @Test func anExtensionSessionIsRefusedWhileTheAppHoldsTheDeviceOnAnotherNode() async throws {
        let link = ScriptedLink { _ in SessionClaimResult(accepted: false, displaced: []) }
        try await SyncTestServer.with(hub: SyncHub(cluster: link)) { server in
            let events = SyncEventLog(server.hub)
            let client = try await server.connect(try await server.device(user: "alice", device: "phone"))
            _ = try await client.hello(role: "extension")
            #expect(try await client.closeCode() == 4002)
            try await Self.until { await server.hub.sessionCount == 0 }
            try await Task.sleep(for: .milliseconds(100))
            #expect(events.recorded.isEmpty, "the planner never hears of a refused session")
            #expect(link.released.isEmpty, "a slot never taken is not released")
        }
    }

    @Test func whatOtherNodesSayActsOnTheSessionsHere() async throws {
        let link = ScriptedLink()
        try await SyncTestServer.with(hub: SyncHub(cluster: link)) { server in
            let phone = try await server.connect(try await server.device(user: "alice", device: "phone"))
            let welcome = try await phone.hello()
            try await Self.until { link.claims.count == 1 }

            // Another node stored a message for alice: the session reads it by cursor.
            let id = try await server.store.appendMessages(appID: "chat", [
                NewMessage(recipients: ["alice"], kind: .message, payload: Data(#"{"text":"from node b"}"#.utf8))
            ])[0].message.id
            await server.hub.received(.mailbox(app: "chat", users: ["alice"]))
            #expect(try await phone.next()["id"]?.string == id)

            // A revocation from before the session opened does not close it; a later one does.
            await server.hub.received(.revoke(app: "chat", device: "phone", at: 0))
            try await phone.roundTrip()
            await server.hub.received(.close(node: "node-z", app: "chat", device: "phone", session: welcome["sessionId"]?.string ?? "", code: 4001))
            try await phone.roundTrip()  // Addressed to another node: nothing happens here.
            await server.hub.received(.close(node: "node-a", app: "chat", device: "phone", session: welcome["sessionId"]?.string ?? "", code: 4001))
            #expect(try await phone.closeCode() == 4001)
        }
    }

    @Test func newMessagesAndReadsAreAnnouncedToTheOtherNodes() async throws {
        let link = ScriptedLink()
        let hub = SyncHub(cluster: link)
        let message = Message(
            id: "m1", appID: "chat", kind: .message, payload: Data("{}".utf8), hints: nil, urgency: .normal,
            expiresAt: nil, idempotencyKey: nil, createdAt: Date(timeIntervalSince1970: 1))
        await hub.messageAppended(message, at: [MailboxPosition(userID: "alice", sequence: 1), MailboxPosition(userID: "bob", sequence: 4)])
        let many = (0...ClusterHint.mostNamedUsers).map { MailboxPosition(userID: "u\($0)", sequence: 1) }
        await hub.messageAppended(message, at: many)
        await hub.readElsewhere(user: UserRef(appID: "chat", userID: "alice"), except: Self.phone, ids: ["m1"], badge: 3)
        #expect(link.published == [
            .mailbox(app: "chat", users: ["alice", "bob"]),
            .mailboxAll(app: "chat"),
            .read(app: "chat", user: "alice", device: "phone", ids: ["m1"], badge: 3),
        ])
    }
}

/// One NOTIFY carries less than 8000 bytes: hints are packed, and split when too long.
@Suite struct ClusterHintBatchTests {
    @Test func longHintsAreSplitAndEveryPayloadFitsAndSaysEverything() throws {
        let users = (0..<2_000).map { "user-\($0)-\(String(repeating: "x", count: 20))" }
        var dropped = 0
        let payloads = ClusterHintBatch.payloads(
            from: "node-a", [.mailbox(app: "chat", users: users), .revoke(app: "chat", device: "phone", at: 1)], dropped: &dropped)
        #expect(dropped == 0)
        #expect(payloads.count > 1)
        #expect(payloads.allSatisfy { $0.utf8.count < 8000 })
        let batches = try payloads.map { try JSONDecoder().decode(ClusterHintBatch.self, from: Data($0.utf8)) }
        #expect(batches.allSatisfy { $0.from == "node-a" })
        let hints = batches.flatMap(\.hints)
        let named = hints.flatMap { hint -> [String] in if case .mailbox(_, let users) = hint { users } else { [] } }
        #expect(named == users, "every user, in order")
        #expect(hints.last == .revoke(app: "chat", device: "phone", at: 1))
    }

    @Test func aHintThatCannotFitAloneIsDroppedAndCounted() {
        var dropped = 0
        let huge = ClusterHint.revoke(app: "chat", device: String(repeating: "d", count: 9_000), at: 1)
        let payloads = ClusterHintBatch.payloads(from: "node-a", [huge, .mailboxAll(app: "chat")], dropped: &dropped)
        #expect(dropped == 1)
        #expect(payloads.count == 1)
    }
}
