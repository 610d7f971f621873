/// How a call ended, as the backend reports it (`POST /v1/calls/{callId}/end`) and the
/// `callEnded` frame and the replacing alert tell the callee's devices (docs/design.md, rule 6).
public enum CallEndOutcome: String, Hashable, Sendable, Codable, CaseIterable {
    /// Another device of the callee answered.
    case answeredElsewhere = "answered-elsewhere"
    /// The callee declined it (on some device).
    case declined
    /// The caller hung up before anyone answered.
    case cancelled
    /// Nobody answered in time.
    case missed
}
