@testable import BeckonDelivery
import BeckonServer
import BeckonStore
import Foundation
import Logging

/// The real `sync_session` and `beckon_node` tables, for the PostgreSQL run of `PresenceCluster`;
/// the planners ask `PostgresCluster`, as a node's do.
struct PostgresSessionSlots: SessionSlots {
    let store: PostgresStore
    let presence: any DevicePresence

    init(store: PostgresStore) {
        self.store = store
        presence = PostgresCluster(
            store: store, configuration: ClusterConfiguration(), share: NodeShare(), logger: Logger(label: "beckon.cluster.test"))
    }

    func join(_ node: String) async throws { _ = try await store.heartbeat(node: node) }

    func claim(_ session: ClusterSession, at date: Date) async throws -> [ClusterSession] {
        try await store.claimSession(session, at: date).displaced
    }

    func release(_ device: DeviceRef, session: String) async throws {
        try await store.releaseSession(device, session: session)
    }

    func reap(_ dead: Set<String>) async throws -> [ClusterSession] {
        // Their heartbeats stopped; what `reapDeadNodes` then finds is every session of a node
        // without a row.
        for node in dead { try await store.execute(unsafeSQL: "DELETE FROM beckon_node WHERE id = '\(node)'") }
        return try await store.reapDeadNodes(heartbeatBefore: Date(timeIntervalSince1970: 0))
    }
}
