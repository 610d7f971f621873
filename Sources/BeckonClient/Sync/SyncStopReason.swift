/// Why a sync session stopped for good (it reconnects after anything else).
public enum SyncStopReason: Hashable, Sendable {
    /// The owner stopped it (`bye`: the app went to the background, or the work is done).
    case requested
    /// The app's session took over from this extension's (close 4002), or the app asked for
    /// the lease (docs/design.md, "Sync roles").
    case preempted
    /// The credential was revoked or the device deleted (close 4003): register again.
    case revoked
    /// The server found a protocol error (close 4008), or speaks another version.
    case protocolError
    /// The lease was lost: another process writes the store now.
    case leaseLost
}
