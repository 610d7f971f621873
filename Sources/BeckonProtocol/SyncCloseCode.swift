/// WebSocket close codes of the sync protocol (docs/sync-protocol.md, "Closing").
public enum SyncCloseCode: UInt16, Hashable, Sendable, CaseIterable {
    /// Clean close, after `bye`.
    case normal = 1000
    /// The server is shutting down: reconnect later or elsewhere.
    case goingAway = 1001
    /// The server failed (the store could not be read or written); reconnect with backoff.
    case internalError = 1011
    /// A newer session of the same device and role took over.
    case replaced = 4001
    /// The device's app session took over from its extension session (or refused one).
    case preempted = 4002
    /// The credential was revoked or the device deleted: do not reconnect with it.
    case revoked = 4003
    /// A protocol error, named in the `error` frame sent before.
    case protocolError = 4008
    /// Too many sessions or frames: retry with backoff.
    case tooMany = 4029

    /// Whether a client should connect again (with backoff) after this close.
    public var allowsReconnect: Bool {
        switch self {
        case .revoked, .preempted, .protocolError: false
        case .normal, .goingAway, .internalError, .replaced, .tooMany: true
        }
    }
}
