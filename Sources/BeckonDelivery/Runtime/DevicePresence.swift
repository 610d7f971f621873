import BeckonStore

/// What the delivery planner asks about a device's sync sessions, wherever they are.
///
/// One node answers from its hub's memory (`SyncHub`); several nodes on PostgreSQL answer from
/// the `sync_session` table every node writes (`PostgresCluster`).
public protocol DevicePresence: Sendable {
    /// Whether the device may have a live session. A planner saved as connected is told of a
    /// drop when this is false: its node restarted, or died and its sessions were reaped.
    func mayBeConnected(_ device: DeviceRef) async -> Bool
    /// Whether a session of the device other than `session` is live. The end of a session that a
    /// newer one replaced (maybe on another node, maybe planned late) is no disconnection.
    func connectedElsewhere(_ device: DeviceRef, besides session: String) async -> Bool
    /// The devices among `devices` whose session a node has claimed, with that session (the
    /// app's, when the extension's is live too). A planner saved as disconnected is told of such a session at once: its
    /// `connected` may still be queued on its node, behind a backlog.
    func liveSessions(_ devices: [DeviceRef]) async -> [DeviceRef: LiveSession]
}
