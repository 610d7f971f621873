import Foundation

/// Exponential backoff with full jitter (delay drawn from [0, min(cap, base·2^attempt)]), which
/// keeps many clients from retrying in lockstep after an APNs incident.
public struct APNSBackoff: Sendable, Hashable {
    public var base: TimeInterval
    public var cap: TimeInterval

    public init(base: TimeInterval, cap: TimeInterval) {
        self.base = base
        self.cap = cap
    }

    /// The delay before attempt number `attempt` (1 = the first retry).
    public func delay(attempt: Int, random: Double = Double.random(in: 0...1)) -> TimeInterval {
        let ceiling = min(cap, base * pow(2, Double(max(attempt - 1, 0))))
        // Never less than a tenth of the base, so a retry storm still spreads out.
        return max(base / 10, ceiling * random)
    }
}
