import Foundation

/// A call ringing by repeated alerts on a device without a VoIP token (rule 6).
struct RingingCall: Hashable, Sendable, Codable {
    var message: PlannedMessage
    var nextRingAt: Date
    /// After this the call is missed: `callTimeout` after it arrived, or the message's expiry if sooner.
    var timeoutAt: Date

    /// The call id is the call message's id; it is also the alerts' collapse id.
    var id: String { message.id }
    var nextEvent: Date { min(nextRingAt, timeoutAt) }
}
