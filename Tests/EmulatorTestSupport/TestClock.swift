import Foundation
import NIOConcurrencyHelpers

/// A clock tests move by hand, shared by an emulator (`APNSEmulatorConfiguration.now`) and
/// whatever issues tokens for it.
public final class TestClock: Sendable {
    private let current: NIOLockedValueBox<Date>

    public init(_ start: Date = Date()) {
        current = NIOLockedValueBox(start)
    }

    public var now: Date { current.withLockedValue { $0 } }

    public func advance(by seconds: TimeInterval) { current.withLockedValue { $0 += seconds } }

    public var function: @Sendable () -> Date { { self.now } }
}
