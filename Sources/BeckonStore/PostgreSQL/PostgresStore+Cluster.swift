import BeckonProtocol
import Foundation
import PostgresNIO

/// What several nodes on one database share besides the data (docs/cluster.md): which nodes are
/// alive, where each sync session is, and a NOTIFY channel for wake-up hints.
extension PostgresStore: ClusterStore {
    // MARK: Nodes

    /// Says that `node` is alive. False if its row was gone: other nodes took it for dead (it
    /// missed heartbeats) and ended its sessions, so the caller must close them; the row is back.
    public func heartbeat(node: String) async throws -> Bool {
        let now = timestamp
        if try await returnsRow("UPDATE beckon_node SET heartbeat_at = \(now) WHERE id = \(node) RETURNING 1") { return true }
        try await client.query(
            "INSERT INTO beckon_node (id, started_at, heartbeat_at) VALUES (\(node), \(now), \(now)) ON CONFLICT DO NOTHING",
            logger: logger)
        return false
    }

    /// A node stopping cleanly: its row and whatever session rows are left go (its sessions were
    /// closed, and their ends planned, before).
    public func removeNode(_ node: String) async throws {
        try await transaction { connection in
            try await connection.query("DELETE FROM sync_session WHERE node_id = \(node)", logger: logger)
            try await connection.query("DELETE FROM beckon_node WHERE id = \(node)", logger: logger)
        }
    }

    /// Nodes whose last heartbeat is at or after `since`.
    public func liveNodeCount(since: Date) async throws -> Int {
        for try await count in try await client.query(
            "SELECT count(*)::integer FROM beckon_node WHERE heartbeat_at >= \(since.millisecondsSince1970)", logger: logger
        ).decode(Int.self) {
            return count
        }
        return 0
    }

    /// Takes the nodes silent since `heartbeatBefore` for dead and removes their sessions (and
    /// sessions of nodes that are gone altogether), returning them: the caller tells the planner
    /// each of those devices dropped. Each row is returned to one caller only (the DELETE).
    public func reapDeadNodes(heartbeatBefore: Date) async throws -> [ClusterSession] {
        try await transaction { connection in
            try await connection.query(
                "DELETE FROM beckon_node WHERE heartbeat_at < \(heartbeatBefore.millisecondsSince1970)", logger: logger)
            var reaped: [ClusterSession] = []
            for try await row in try await connection.query(
                """
                DELETE FROM sync_session WHERE node_id NOT IN (SELECT id FROM beckon_node)
                RETURNING app_id, device_id, role, user_id, node_id, session_id
                """, logger: logger
            ).decode((String, String, String, String, String, String).self) {
                reaped.append(Self.clusterSession(row))
            }
            return reaped
        }
    }

    // MARK: Sessions

    /// Claims the device's slot for `session` (see `SessionClaimResult`). Claims of one device
    /// are serialised by an advisory lock on it, whichever nodes make them.
    public func claimSession(_ session: ClusterSession, at date: Date) async throws -> SessionClaimResult {
        let device = session.device
        return try await transaction { connection in
            try await connection.query(
                "SELECT pg_advisory_xact_lock(hashtext(\(device.appID) || '/' || \(device.deviceID)))", logger: logger)
            var existing: [ClusterSession] = []
            for try await row in try await connection.query(
                """
                SELECT app_id, device_id, role, user_id, node_id, session_id FROM sync_session
                WHERE app_id = \(device.appID) AND device_id = \(device.deviceID)
                """, logger: logger
            ).decode((String, String, String, String, String, String).self) {
                existing.append(Self.clusterSession(row))
            }
            let others = existing.filter { $0.session != session.session }
            if session.role == .extension, others.contains(where: { $0.role == .app }) {
                return SessionClaimResult(accepted: false, displaced: [])
            }
            // The same role is replaced; an app session also preempts the extension's.
            let displaced = others.filter { $0.role == session.role || session.role == .app }
            for taken in displaced where taken.role != session.role {
                try await connection.query(
                    """
                    DELETE FROM sync_session WHERE app_id = \(device.appID) AND device_id = \(device.deviceID)
                      AND role = \(taken.role.rawValue)
                    """, logger: logger)
            }
            try await connection.query(
                """
                INSERT INTO sync_session (app_id, device_id, role, user_id, node_id, session_id, connected_at)
                VALUES (\(device.appID), \(device.deviceID), \(session.role.rawValue), \(session.userID), \(session.node),
                        \(session.session), \(date.millisecondsSince1970))
                ON CONFLICT (app_id, device_id, role) DO UPDATE SET user_id = excluded.user_id, node_id = excluded.node_id,
                    session_id = excluded.session_id, connected_at = excluded.connected_at
                """, logger: logger)
            return SessionClaimResult(accepted: true, displaced: displaced)
        }
    }

    /// The session ended: its row goes, unless a newer session has the slot already.
    public func releaseSession(_ device: DeviceRef, session: String) async throws {
        try await client.query(
            "DELETE FROM sync_session WHERE app_id = \(device.appID) AND device_id = \(device.deviceID) AND session_id = \(session)",
            logger: logger)
    }

    /// Whether any node holds a session of the device, other than `session` if given.
    public func hasSession(_ device: DeviceRef, besides session: String? = nil) async throws -> Bool {
        try await returnsRow(
            """
            SELECT 1 FROM sync_session WHERE app_id = \(device.appID) AND device_id = \(device.deviceID)
              AND session_id IS DISTINCT FROM \(session)
            """)
    }

    /// The devices among `devices` with a session on some node: its role (the app's when the
    /// extension's is live too) and when it connected.
    public func liveSessions(_ devices: [DeviceRef]) async throws -> [DeviceRef: (role: SyncRole, connectedAt: Date)] {
        guard !devices.isEmpty else { return [:] }
        var sessions: [DeviceRef: (role: SyncRole, connectedAt: Date)] = [:]
        for try await (appID, deviceID, role, connectedAt) in try await client.query(
            """
            SELECT app_id, device_id, role, connected_at FROM sync_session
            WHERE (app_id, device_id) IN (SELECT * FROM unnest(\(devices.map(\.appID))::text[], \(devices.map(\.deviceID))::text[]))
            """, logger: logger
        ).decode((String, String, String, Int64).self) {
            let ref = DeviceRef(appID: appID, deviceID: deviceID)
            let role = SyncRole(rawValue: role) ?? .app
            if sessions[ref]?.role == .app { continue }
            sessions[ref] = (role, Date(millisecondsSince1970: connectedAt))
        }
        return sessions
    }

    /// Users with a session on `node` whose mailbox changed at or after `since`: what a node
    /// wakes when a hint may have been lost (the polling fallback).
    public func changedUsers(onNode node: String, since: Date) async throws -> [UserRef] {
        var users: [UserRef] = []
        for try await (appID, userID) in try await client.query(
            """
            SELECT DISTINCT us.app_id, us.user_id FROM user_sequence us
            JOIN sync_session s ON s.app_id = us.app_id AND s.user_id = us.user_id
            WHERE s.node_id = \(node) AND us.changed_at >= \(since.millisecondsSince1970)
            """, logger: logger
        ).decode((String, String).self) {
            users.append(UserRef(appID: appID, userID: userID))
        }
        return users
    }

    // MARK: Hints

    /// Sends `payload` (at most 8000 bytes, PostgreSQL's limit) to every node listening on
    /// `channel`, in a statement of its own: a NOTIFY inside a busy transaction would serialise
    /// every commit behind it.
    public func notify(channel: String, payload: String) async throws {
        try await client.query("SELECT pg_notify(\(channel), \(payload))", logger: logger)
    }

    /// Listens on `channel` on a connection of its own, calling `ready` once listening and
    /// `receive` with each payload, until the connection fails (it throws) or the task is
    /// cancelled. Hints sent while no connection listens are lost: the caller catches up.
    public func listen(
        channel: String, ready: @Sendable () async -> Void, receive: @Sendable (String) async -> Void
    ) async throws {
        try await client.withConnection { connection in
            try await connection.listen(on: channel) { notifications in
                await ready()
                for try await notification in notifications { await receive(notification.payload) }
            }
        }
    }

    private static func clusterSession(_ row: (String, String, String, String, String, String)) -> ClusterSession {
        ClusterSession(
            device: DeviceRef(appID: row.0, deviceID: row.1), role: SyncRole(rawValue: row.2) ?? .app, userID: row.3,
            node: row.4, session: row.5)
    }
}
