import BeckonProtocol
import Foundation

/// What several nodes on one database share besides the data (docs/cluster.md): which nodes are
/// alive, which node holds each sync session, and a channel for wake-up hints. Only the
/// PostgreSQL store has it (a lone SQLite node has nothing to share), so it is not part of
/// `BeckonStore`.
public protocol ClusterStore: Sendable {
    // MARK: Nodes

    /// Says that `node` is alive. False if its row was gone: other nodes took it for dead (it
    /// missed heartbeats) and ended its sessions, so the caller must close them; the row is back.
    func heartbeat(node: String) async throws -> Bool
    /// A node stopping cleanly: its row and whatever session rows are left go (its sessions were
    /// closed, and their ends planned, before).
    func removeNode(_ node: String) async throws
    /// Nodes whose last heartbeat is at or after `since`.
    func liveNodeCount(since: Date) async throws -> Int
    /// Takes the nodes silent since `heartbeatBefore` for dead and removes their sessions (and
    /// sessions of nodes that are gone altogether), returning them: the caller tells the planner
    /// each of those devices dropped. Each row is returned to one caller only.
    func reapDeadNodes(heartbeatBefore: Date) async throws -> [ClusterSession]

    // MARK: Sessions

    /// Claims the device's slot for `session` (see `SessionClaimResult`); claims of one device
    /// are serialised, whichever nodes make them.
    func claimSession(_ session: ClusterSession, at date: Date) async throws -> SessionClaimResult
    /// The session ended: its row goes, unless a newer session has the slot already.
    func releaseSession(_ device: DeviceRef, session: String) async throws
    /// Whether any node holds a session of the device, other than `session` if given.
    func hasSession(_ device: DeviceRef, besides session: String?) async throws -> Bool
    /// The devices among `devices` with a session on some node: its role (the app's when the
    /// extension's is live too) and when it connected.
    func liveSessions(_ devices: [DeviceRef]) async throws -> [DeviceRef: (role: SyncRole, connectedAt: Date)]
    /// Users with a session on `node` whose mailbox changed at or after `since`: what a node
    /// wakes when a hint may have been lost (the polling fallback).
    func changedUsers(onNode node: String, since: Date) async throws -> [UserRef]

    // MARK: Hints

    /// Sends `payload` to every node listening on `channel`.
    func notify(channel: String, payload: String) async throws
    /// Listens on `channel`, calling `ready` once listening and `receive` with each payload, until
    /// the connection fails (it throws) or the task is cancelled. Hints sent while nothing listens
    /// are lost: the caller catches up.
    func listen(
        channel: String, ready: @Sendable () async -> Void, receive: @Sendable (String) async -> Void
    ) async throws
}
