import NIOConcurrencyHelpers

/// One of the node's `limits.event-streams`, taken while a stream's response lives.
final class StreamSlot: Sendable {
    private let open: NIOLockedValueBox<Int>

    init?(_ open: NIOLockedValueBox<Int>, limit: Int) {
        guard open.withLockedValue({ count in
            guard count < limit else { return false }
            count += 1
            return true
        }) else { return nil }
        self.open = open
    }

    deinit { open.withLockedValue { $0 -= 1 } }
}
