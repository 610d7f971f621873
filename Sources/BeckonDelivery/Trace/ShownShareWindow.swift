import BeckonStore
import Foundation

/// One app's shown-within-a-minute figures over the last `span`, counted a `step` at a time:
/// each count reads only the messages of the step that just had its minute, not the whole hour
/// again (the hour at once read 100,000 messages in 0.8 s of CPU, every minute, docs/trace.md).
struct ShownShareWindow: Sendable {
    let span: TimeInterval
    let step: TimeInterval
    /// The counted steps, oldest first.
    private(set) var steps: [(from: Date, shares: [ShownShare])] = []
    /// The end of the last counted step; nil before the first.
    private(set) var countedThrough: Date?

    init(span: TimeInterval = 3_600, step: TimeInterval = 60) {
        self.span = span
        self.step = step
    }

    /// The steps to count for a window that ends at `end`, in order: those after the last
    /// counted one, whole steps only (the whole span the first time).
    func due(endingAt end: Date) -> [DateInterval] {
        var from = max(countedThrough ?? end.addingTimeInterval(-span), end.addingTimeInterval(-span))
        var due: [DateInterval] = []
        while from.addingTimeInterval(step) <= end {
            due.append(DateInterval(start: from, duration: step))
            from = from.addingTimeInterval(step)
        }
        return due
    }

    /// Records a counted step, and forgets the steps that left the span.
    mutating func add(_ shares: [ShownShare], for interval: DateInterval) {
        steps.append((interval.start, shares))
        countedThrough = interval.end
        let start = interval.end.addingTimeInterval(-span)
        steps.removeAll { $0.from < start }
    }

    /// The span's figures, by strategy.
    var totals: [ShownShare] {
        var totals: [String: ShownShare] = [:]
        for share in steps.flatMap(\.shares) {
            totals[share.strategy, default: ShownShare(strategy: share.strategy, messages: 0, shown: 0)].messages += share.messages
            totals[share.strategy]!.shown += share.shown
        }
        return totals.values.sorted { $0.strategy < $1.strategy }
    }
}
