/// How a call ended, as the server learned it (from the caller or one of the callee's devices).
/// The planner stops ringing and decides the last alert from it (rule 6).
public enum CallOutcome: String, Hashable, Sendable, Codable, CaseIterable {
    /// Answered on this device: the user is here, so nothing more is pushed.
    case answeredHere = "answered-here"
    /// Answered on another device: the ringing alert is replaced by an "answered elsewhere" one.
    case answeredElsewhere = "answered-elsewhere"
    /// Declined on this device: the user dismissed it here, so nothing more is pushed.
    case declinedHere = "declined-here"
    /// Declined on another device: the ringing alert is replaced by a "declined elsewhere" one.
    case declinedElsewhere = "declined-elsewhere"
    /// The caller hung up before anyone answered: a missed call.
    case endedByCaller = "ended-by-caller"
}
