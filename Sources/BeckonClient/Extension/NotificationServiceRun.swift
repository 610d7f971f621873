/// One push being worked on: delivers exactly once, whichever comes first — the work's result,
/// the internal deadline, iOS's expiry.
public final class NotificationServiceRun: Sendable {
    private struct State {
        var deliver: (@Sendable (NotificationServiceOutcome) -> Void)?
        var best: NotificationContent?
        var onFinish: [@Sendable () -> Void] = []
        var outcome: NotificationServiceOutcome?
    }

    private let fallback: NotificationContent
    private let state: Locked<State>

    init(fallback: NotificationContent, deliver: @escaping @Sendable (NotificationServiceOutcome) -> Void) {
        self.fallback = fallback
        self.state = Locked(State(deliver: deliver))
    }

    /// iOS's `serviceExtensionTimeWillExpire()`: deliver the best content so far, now.
    public func timeWillExpire() {
        finishWithBest(.timeWillExpire)
    }

    /// What was delivered, once it was.
    public var outcome: NotificationServiceOutcome? { state.withLock { $0.outcome } }

    func improve(_ content: NotificationContent) {
        state.withLock { $0.best = content }
    }

    func finishWithBest(_ reason: NotificationServiceOutcome.FallbackReason) {
        let best = state.withLock { $0.best }
        finish(best.map(NotificationServiceOutcome.rewritten) ?? .fallback(fallback, reason))
    }

    func finish(_ outcome: NotificationServiceOutcome) {
        let (deliver, hooks) = state.withLock { state -> ((@Sendable (NotificationServiceOutcome) -> Void)?, [@Sendable () -> Void]) in
            guard let deliver = state.deliver else { return (nil, []) }
            state.deliver = nil
            state.outcome = outcome
            defer { state.onFinish.removeAll() }
            return (deliver, state.onFinish)
        }
        guard let deliver else { return }
        deliver(outcome)
        for hook in hooks { hook() }
    }

    func onFinish(_ hook: @escaping @Sendable () -> Void) {
        let finished = state.withLock { state -> Bool in
            guard state.deliver != nil else { return true }
            state.onFinish.append(hook)
            return false
        }
        if finished { hook() }
    }
}
