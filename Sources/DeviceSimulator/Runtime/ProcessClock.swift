import BeckonClient
import Foundation

/// One process's view of time. A suspended process runs no code, so its timers fire only once
/// it resumes; a killed process never runs again, so its timers never fire (the SDK's lease
/// renewals stop, and the lease expires as it would on a phone). Everything else is the shared
/// scaled clock.
final class ProcessClock: ClientClock {
    enum Phase: Sendable { case running, suspended, dead }

    let base: ScaledClock
    private let state = Locked<(phase: Phase, waiting: [CheckedContinuation<Void, Never>])>((.running, []))

    init(base: ScaledClock) { self.base = base }

    func now() -> Date { base.now() }

    func sleep(for duration: Duration) async throws {
        try await base.sleep(for: duration)
        await untilRunning()
        try Task.checkCancellation()
    }

    var phase: Phase { state.withLock { $0.phase } }

    func set(_ phase: Phase) {
        let resumed = state.withLock { state -> [CheckedContinuation<Void, Never>] in
            guard state.phase != .dead else { return [] }
            state.phase = phase
            guard phase == .running else { return [] }
            defer { state.waiting.removeAll() }
            return state.waiting
        }
        for waiter in resumed { waiter.resume() }
    }

    /// Returns when the process runs; never, once it is dead.
    func untilRunning() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let runs = state.withLock { state -> Bool in
                guard state.phase != .running else { return true }
                state.waiting.append(continuation)
                return false
            }
            if runs { continuation.resume() }
        }
    }
}
