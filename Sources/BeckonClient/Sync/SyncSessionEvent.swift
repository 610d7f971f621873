import BeckonProtocol

/// What a running session reports, for the app's UI, the background fetch result, and tests.
public enum SyncSessionEvent: Hashable, Sendable {
    case connected(sessionID: String)
    /// A message committed to the store (`isNew`: not seen before).
    case stored(SyncMessage, isNew: Bool)
    case caughtUp
    case readElsewhere([String])
    case callEnded(callID: String, outcome: CallEndOutcome)
    case disconnected(code: UInt16?)
    case stopped(SyncStopReason)
}
