import Foundation

/// How many times a notification is tried and how long to wait between tries: exponential
/// backoff with full jitter (`APNSBackoff`). One policy type for both layers that retry — the
/// client's immediate retries within one send's deadline, and the delivery dispatcher's later
/// attempts of a push still in the outbox — so both spread their retries the same way
/// (docs/apns.md C.4: back off on 429 and 5xx).
public struct APNSRetryPolicy: Sendable, Hashable {
    /// Attempts in all, the first included; at least 1.
    public var maximumAttempts: Int
    public var backoff: APNSBackoff

    public init(maximumAttempts: Int, backoff: APNSBackoff) {
        self.maximumAttempts = max(1, maximumAttempts)
        self.backoff = backoff
    }

    /// The wait before the next attempt once `attemptsMade` attempts have failed, or nil when
    /// they are all used up. `random` in 0...1 draws the jitter.
    public func delay(afterAttempts attemptsMade: Int, random: @autoclosure () -> Double = Double.random(in: 0...1))
        -> TimeInterval?
    {
        guard attemptsMade < maximumAttempts else { return nil }
        return backoff.delay(attempt: attemptsMade, random: random())
    }
}
