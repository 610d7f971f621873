/// What a socket reports.
public enum SyncTransportEvent: Hashable, Sendable {
    case text(String)
    /// The socket ended: with the server's close code, or nil when it dropped without one.
    case closed(code: UInt16?)
}
