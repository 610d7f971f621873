/// Why the planner sent a push: exported with every wake measurement (rule 10), so success rate
/// and latency can be compared per reason and per strategy.
public enum PushReason: String, Hashable, Sendable, Codable, CaseIterable {
    /// A background push for new messages (`wake` strategy, rule 3).
    case wake
    /// An alert for a new message under an alert strategy (`service-extension`, `filtering`, `content`).
    case alert
    /// A high-urgency message: an immediate priority-10 alert whatever the strategy.
    case urgentAlert = "urgent-alert"
    /// An alert sent instead of a wake because the device did not answer one (rule 4).
    case unreachableAlert = "unreachable-alert"
    /// An alert sent because owed wakes stayed throttled too long (rule 3: never count on one).
    case throttledAlert = "throttled-alert"
    /// A push repeated for messages left unacknowledged by a dropped connection (rule 5).
    case repush
    /// A PushKit VoIP push for an incoming call (rule 6).
    case callVoIP = "call-voip"
    /// One of the repeated alerts that ring a call on a device without a VoIP token (rule 6).
    case callRing = "call-ring"
    /// The final alert for a call nobody answered (timeout, or the caller hung up) (rule 6).
    case missedCall = "missed-call"
    /// Replaces the ringing alert: the call was answered on another device (rule 6).
    case answeredElsewhere = "answered-elsewhere"
    /// Replaces the ringing alert: the call was declined on another device (rule 6).
    case declinedElsewhere = "declined-elsewhere"
    /// A background push carrying ids of notifications to remove, read on another device (rule 7).
    case clear
    /// `{"aps":{"badge":0}}`: the user has nothing unread, and this clears every notification of
    /// the app on the device, even one the user killed (seed 000; docs/apns.md D.1).
    case clearAll = "clear-all"
    /// A push its caller wrote field by field (gorush's `/api/push`), sent once as asked.
    case relayed
}
