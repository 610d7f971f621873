import Foundation

/// What one attempt at sending an outbox push came to.
public enum PushAttemptResult: Hashable, Sendable {
    /// APNs accepted it (200); `uniqueID` is its `apns-unique-id` (sandbox only).
    case sent(at: Date, uniqueID: String? = nil)
    /// APNs refused it for good, or it expired: `status` 0 when there was no answer.
    case failed(status: Int, reason: String?, at: Date)
    /// No answer, or a 429/5xx after the client's own retries: try again at `nextAttempt`.
    case retry(status: Int, reason: String?, nextAttempt: Date)
}
