import Foundation

/// What the rest of the server knows of a device's sync sessions: whether it is connected, since
/// when, its last ack, and how its last session ended. The delivery planner reads it (design
/// rule 5: a device that dropped with unacknowledged messages is pushed again).
///
/// Kept in memory by the node the device connected to; it starts empty at each start.
public struct SyncPresence: Sendable, Equatable {
    /// When the current session connected; nil while the device has no live session here.
    public var connectedSince: Date?
    /// The highest sequence the device acknowledged in a session (including its hello cursor).
    public var lastAck: Int64?
    public var lastAckAt: Date?
    /// How the last session ended; nil while the first session is still live.
    public var lastEnd: SyncSessionEnd?
    public var lastEndAt: Date?

    public var isConnected: Bool { connectedSince != nil }
}
