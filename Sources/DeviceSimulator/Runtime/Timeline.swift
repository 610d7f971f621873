import BeckonClient
import Foundation

/// Collects every device's timeline events, stamped with the virtual time (thread-safe: the
/// devices, the emulator's device side and the runner all record into it).
public final class Timeline: Sendable {
    public let clock: ScaledClock
    private let events = Locked<[TimelineEvent]>([])

    public init(clock: ScaledClock) { self.clock = clock }

    public func record(_ device: String, _ what: TimelineEvent.What) {
        let event = TimelineEvent(time: clock.elapsed, device: device, what: what)
        events.withLock { $0.append(event) }
    }

    /// Every event so far, in the order recorded.
    public var all: [TimelineEvent] { events.withLock { $0 } }
}
