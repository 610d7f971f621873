import BeckonProtocol

/// What a running session reports, for the app's UI, the background fetch result, and tests.
public enum SyncSessionEvent: Hashable, Sendable {
    /// Connected: the server welcomed the session.
    case connected(sessionID: String)
    /// A message committed to the store (`isNew`: not seen before).
    case stored(SyncMessage, isNew: Bool)
    /// Everything the server had for the device has arrived.
    case caughtUp
    /// Messages read on another device; their notifications are gone.
    case readElsewhere([String])
    /// A call answered, declined or cancelled elsewhere; it stopped ringing.
    case callEnded(callID: String, outcome: CallEndOutcome)
    /// The connection dropped (the WebSocket close code, if any); it reconnects.
    case disconnected(code: UInt16?)
    /// The session ended, and why; the next reason to sync starts another.
    case stopped(SyncStopReason)
}
