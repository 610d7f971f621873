/// Whether the app is connected to the server now, for a status line (`BeckonApp.connectionStates()`).
public enum ConnectionState: Hashable, Sendable {
    /// No session: nothing needs one (the app is in the background with nothing to sync), or
    /// none could be had (no credential yet, the lease not granted).
    case idle
    /// A session is connecting, or reconnecting after the connection dropped (with backoff).
    case connecting
    /// Connected: messages arrive as they are posted.
    case connected
}
