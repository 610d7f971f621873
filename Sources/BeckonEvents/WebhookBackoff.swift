import Foundation

/// The wait before the next attempt after `failures` failed ones in a row: `initial`, doubling
/// each time, at most `maximum`. A receiver down for ten minutes is tried about a dozen times
/// with the defaults (1 s to 5 min), and its events wait in the log meanwhile.
public struct WebhookBackoff: Sendable, Equatable {
    public var initial: TimeInterval
    public var maximum: TimeInterval

    public init(initial: TimeInterval, maximum: TimeInterval) {
        self.initial = initial
        self.maximum = maximum
    }

    public func delay(afterFailures failures: Int) -> TimeInterval {
        guard failures > 0 else { return 0 }
        return min(maximum, initial * pow(2, Double(min(failures - 1, 30))))
    }
}
