import Foundation

/// One attempt at sending an outbox push, and APNs' answer to it.
public struct PushAttempt: Hashable, Sendable {
    public enum Outcome: String, Hashable, Sendable {
        case sent, failed, retry
    }

    /// 1 for the first attempt.
    public var number: Int
    public var at: Date
    public var outcome: Outcome
    /// APNs' HTTP status; 0 when no answer came.
    public var status: Int
    /// APNs' `reason`, or what went wrong when there was no answer.
    public var reason: String?
    /// APNs' `apns-unique-id` (sandbox only): the key of Apple's delivery log for this push.
    public var uniqueID: String?

    public init(number: Int, at: Date, outcome: Outcome, status: Int, reason: String? = nil, uniqueID: String? = nil) {
        self.number = number
        self.at = at
        self.outcome = outcome
        self.status = status
        self.reason = reason
        self.uniqueID = uniqueID
    }
}
