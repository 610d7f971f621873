@testable import BeckonDelivery
import BeckonServer
import BeckonStore
import Foundation

/// The cluster's table of session slots (`sync_session`, docs/cluster.md, "One session per device
/// and role, cluster-wide") as `PresenceCluster` uses it: on PostgreSQL the real table, on SQLite
/// (which has none) a copy in memory with the same rules.
protocol SessionSlots: Sendable {
    /// The node is alive (its heartbeat row).
    func join(_ node: String) async throws
    /// Takes the device's slot for `session`; returns the sessions it displaced.
    func claim(_ session: ClusterSession, at date: Date) async throws -> [ClusterSession]
    /// The session ended: its row goes, unless a newer session holds the slot.
    func release(_ device: DeviceRef, session: String) async throws
    /// The nodes in `dead` stopped without their shutdown path and were taken for dead: their
    /// rows go, and their sessions are returned, once.
    func reap(_ dead: Set<String>) async throws -> [ClusterSession]
    /// What the planners ask (`PostgresCluster` itself on PostgreSQL).
    var presence: any DevicePresence { get }
}
