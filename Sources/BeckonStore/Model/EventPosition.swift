/// Where an event sits in its app's log. SQLite has one writer, so its sequence is commit order
/// and `transaction` is 0. On PostgreSQL several transactions take sequence numbers at once and
/// commit in another order, so the log is read by (transaction id, sequence), and only below the
/// oldest transaction still running: that part of the log no longer changes, and a reader that
/// walks it in order misses nothing (docs/webhooks.md, "Order").
public struct EventPosition: Hashable, Comparable, Sendable {
    public var transaction: Int64
    public var sequence: Int64

    public init(transaction: Int64 = 0, sequence: Int64) {
        self.transaction = transaction
        self.sequence = sequence
    }

    /// Before every event.
    public static let start = EventPosition(transaction: 0, sequence: 0)

    public static func < (lhs: EventPosition, rhs: EventPosition) -> Bool {
        (lhs.transaction, lhs.sequence) < (rhs.transaction, rhs.sequence)
    }
}
