import Foundation

/// Re-pushes for messages a dropped connection left unacknowledged (rule 5, XMPP stream
/// management practice): `repushInitialDelay`, then growing by `repushBackoffMultiplier`, at most
/// `repushLimit` times; cancelled by a connection or by the acknowledgement of them all.
struct RepushSchedule: Hashable, Sendable, Codable {
    var messageIDs: [String]
    var sent: Int = 0
    var nextAt: Date

    /// The delay before re-push number `sent + 1`.
    static func delay(afterSent sent: Int, policy: DeliveryPolicy) -> TimeInterval {
        policy.repushInitialDelay * pow(policy.repushBackoffMultiplier, Double(sent))
    }
}
