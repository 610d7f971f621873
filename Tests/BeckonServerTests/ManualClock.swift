import Foundation
import NIOConcurrencyHelpers

/// A clock the test moves by hand: deadlines come due when the test says, never by waiting.
final class ManualClock: Sendable {
    private let current: NIOLockedValueBox<Date>

    init(_ start: Date = Date(timeIntervalSince1970: 1_750_000_000)) {
        current = NIOLockedValueBox(start)
    }

    var now: Date { current.withLockedValue { $0 } }

    func advance(by seconds: TimeInterval) {
        current.withLockedValue { $0 += seconds }
    }
}
