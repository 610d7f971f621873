import Foundation

/// What ending a call came to (`CallStore.endCall`).
public enum CallEndResult: Hashable, Sendable {
    /// Ended now: these users were the call's recipients.
    case ended(users: [UserRef], at: Date)
    /// Ended before, with this outcome (the same call ended again is answered the same way).
    case alreadyEnded(outcome: String, at: Date)
}
