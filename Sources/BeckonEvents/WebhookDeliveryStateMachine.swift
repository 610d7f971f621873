import BeckonStore
import Foundation

/// What one app's webhook does next, as pure transitions (the sender performs them): read a batch
/// after the cursor, send it, and on a 2xx move the cursor past it; on anything else send the
/// same batch again after a backoff, for as long as it takes. One batch is in flight at a time,
/// so the receiver gets the log in order.
struct WebhookDeliveryStateMachine: Sendable {
    enum Action: Equatable, Sendable {
        /// Read up to a batch of events after this position.
        case read(after: EventPosition)
        /// POST these (again, after a failure: the same batch, the same id).
        case send([MessageEvent])
        /// Move the cursor to the batch's last event and log the attempt.
        case advance(to: EventPosition)
        /// Log the failed attempt, then wait before the next one.
        case retry(after: TimeInterval)
        /// Nothing to do for now: another node holds the webhook, or nothing is waiting.
        case wait(TimeInterval)
    }

    let backoff: WebhookBackoff
    let pollInterval: TimeInterval
    let leaseRetry: TimeInterval
    private var batch: [MessageEvent] = []
    /// The cursor the batch was read after: a replay (or another node) that moved the cursor
    /// makes the batch stale.
    private var batchAfter: EventPosition?
    private(set) var failures = 0

    init(backoff: WebhookBackoff, pollInterval: TimeInterval, leaseRetry: TimeInterval) {
        self.backoff = backoff
        self.pollInterval = pollInterval
        self.leaseRetry = leaseRetry
    }

    /// The lease was taken (the webhook's cursor) or is another node's (nil).
    mutating func leased(cursor: EventPosition?) -> Action {
        guard let cursor else {
            batch = []
            batchAfter = nil
            failures = 0
            return .wait(leaseRetry)
        }
        if !batch.isEmpty, batchAfter == cursor { return .send(batch) }
        batch = []
        return .read(after: cursor)
    }

    mutating func read(_ events: [MessageEvent], after cursor: EventPosition) -> Action {
        guard !events.isEmpty else { return .wait(pollInterval) }
        batch = events
        batchAfter = cursor
        return .send(events)
    }

    /// The receiver's status, or 0 when no answer came.
    mutating func answered(status: Int) -> Action {
        if (200..<300).contains(status), let last = batch.last {
            batch = []
            batchAfter = nil
            failures = 0
            return .advance(to: last.position)
        }
        failures += 1
        return .retry(after: backoff.delay(afterFailures: failures))
    }
}
