import Foundation

/// A clock that moves only when told to: tests and the device simulator advance it, and every
/// sleeper whose deadline has passed wakes, earliest first.
public final class ManualClock: ClientClock, @unchecked Sendable {
    private struct Sleeper {
        let id: UInt64
        let deadline: Date
        let continuation: CheckedContinuation<Void, any Error>
    }

    private struct State {
        var now: Date
        var sleepers: [Sleeper] = []
        var cancelled: Set<UInt64> = []
        var nextID: UInt64 = 0
    }

    private let state: Locked<State>

    public init(start: Date = Date(timeIntervalSince1970: 1_700_000_000)) {
        state = Locked(State(now: start))
    }

    public func now() -> Date { state.withLock { $0.now } }

    /// How many tasks are asleep on this clock: a test advances time once the code under test
    /// has reached its sleep.
    public var sleeperCount: Int { state.withLock { $0.sleepers.count } }

    /// When each sleeper wakes, earliest first: a test waits for a timer to be set before it
    /// moves time to it.
    public var sleeperDeadlines: [Date] { state.withLock { $0.sleepers.map(\.deadline).sorted() } }

    /// The earliest deadline anyone sleeps until.
    public var nextDeadline: Date? { state.withLock { $0.sleepers.map(\.deadline).min() } }

    public func sleep(for duration: Duration) async throws {
        let id = state.withLock { state -> UInt64 in
            state.nextID += 1
            return state.nextID
        }
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                enum Outcome { case sleep, wake, cancel }
                let outcome = state.withLock { state -> Outcome in
                    if state.cancelled.remove(id) != nil { return .cancel }
                    let deadline = state.now.addingTimeInterval(duration.timeInterval)
                    if deadline <= state.now { return .wake }
                    state.sleepers.append(Sleeper(id: id, deadline: deadline, continuation: continuation))
                    return .sleep
                }
                switch outcome {
                case .sleep: break
                case .wake: continuation.resume()
                case .cancel: continuation.resume(throwing: CancellationError())
                }
            }
        } onCancel: {
            let sleeper = state.withLock { state -> Sleeper? in
                guard let index = state.sleepers.firstIndex(where: { $0.id == id }) else {
                    // Not asleep yet: the registration above sees this and throws.
                    state.cancelled.insert(id)
                    return nil
                }
                return state.sleepers.remove(at: index)
            }
            sleeper?.continuation.resume(throwing: CancellationError())
        }
    }

    /// Moves time forward and wakes every sleeper whose deadline has come, earliest first.
    public func advance(by duration: Duration) {
        let due = state.withLock { state -> [Sleeper] in
            state.now = state.now.addingTimeInterval(duration.timeInterval)
            let now = state.now
            let due = state.sleepers.filter { $0.deadline <= now }.sorted { $0.deadline < $1.deadline }
            state.sleepers.removeAll { $0.deadline <= now }
            return due
        }
        for sleeper in due { sleeper.continuation.resume() }
    }

    /// Moves time to the earliest sleeper's deadline (if any) and wakes it.
    public func advanceToNextDeadline() {
        guard let next = nextDeadline else { return }
        let gap = max(0, next.timeIntervalSince(now()))
        advance(by: .nanoseconds(Int64((gap * 1e9).rounded(.up))))
    }
}
