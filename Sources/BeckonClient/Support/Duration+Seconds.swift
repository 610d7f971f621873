import Foundation

extension Duration {
    /// As Foundation's seconds, for `Date` arithmetic.
    package var timeInterval: TimeInterval {
        let (seconds, attoseconds) = components
        return TimeInterval(seconds) + TimeInterval(attoseconds) / 1e18
    }

    /// Whole milliseconds: lease rows store times as milliseconds since 1970.
    package var milliseconds: Int64 {
        let (seconds, attoseconds) = components
        return seconds * 1000 + attoseconds / 1_000_000_000_000_000
    }
}

extension Date {
    /// Milliseconds since 1970: the unit of every time the store keeps.
    package var milliseconds: Int64 { Int64((timeIntervalSince1970 * 1000).rounded(.down)) }

    package init(milliseconds: Int64) { self.init(timeIntervalSince1970: TimeInterval(milliseconds) / 1000) }
}
