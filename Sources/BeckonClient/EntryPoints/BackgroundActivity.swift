/// One background task, begun through `BackgroundTimePort`: ended exactly once, by `end()` or,
/// when iOS wants the time back, inside the expiration handler itself after the work was told
/// to stop. Apple terminates an app whose expiration handler returns with the task still open
/// (apns.md E.9), so nothing here waits for an actor or a task on that path.
public final class BackgroundActivity: Sendable {
    private struct State {
        var token: BackgroundTaskToken?
        var expired = false
        var ended = false
        var onExpiry: [@Sendable () -> Void] = []
    }

    private let port: any BackgroundTimePort
    private let state = Locked(State())

    /// Begins the task now.
    public init(_ name: String, port: any BackgroundTimePort) {
        self.port = port
        let token = port.begin(name, expired: { [state] in Self.expire(state, port: port) })
        let endNow = state.withLock { state -> Bool in
            state.token = token
            // Expired before `begin` returned (possible only off the main thread): end it now.
            return state.expired && !state.ended
        }
        if endNow { end() }
    }

    /// Runs `handler` synchronously if the time runs out before `end()`; at once if it already has.
    public func onExpiry(_ handler: @escaping @Sendable () -> Void) {
        let runNow = state.withLock { state -> Bool in
            guard !state.expired else { return true }
            state.onExpiry.append(handler)
            return false
        }
        if runNow { handler() }
    }

    /// Whether iOS took the time back.
    public var hasExpired: Bool { state.withLock { $0.expired } }

    /// Ends the task (once; later calls do nothing).
    public func end() {
        Self.end(state, port: port)
    }

    private static func end(_ state: Locked<State>, port: any BackgroundTimePort) {
        let token = state.withLock { state -> BackgroundTaskToken? in
            guard !state.ended, let token = state.token else { return nil }
            state.ended = true
            return token
        }
        if let token { port.end(token) }
    }

    /// The expiration handler: the work stops, then the task ends, before this returns.
    private static func expire(_ state: Locked<State>, port: any BackgroundTimePort) {
        let handlers = state.withLock { state -> [@Sendable () -> Void] in
            guard !state.expired else { return [] }
            state.expired = true
            defer { state.onExpiry.removeAll() }
            return state.onExpiry
        }
        for handler in handlers { handler() }
        end(state, port: port)
    }
}
