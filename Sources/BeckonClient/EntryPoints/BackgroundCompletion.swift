/// The background fetch completion handler, callable once: iOS terminates an app that calls it
/// late (30 s, apns.md E.3), and calling it twice is a programming error. Every path through
/// `BeckonApp` calls it exactly once, at the latest at the internal deadline.
public final class BackgroundCompletion: Sendable {
    private let handler: Locked<(@Sendable (BackgroundFetchResult) -> Void)?>

    public init(_ handler: @escaping @Sendable (BackgroundFetchResult) -> Void) {
        self.handler = Locked(handler)
    }

    /// Calls the handler unless it has been called; returns whether this call did.
    @discardableResult
    public func callAsFunction(_ result: BackgroundFetchResult) -> Bool {
        guard let handler = handler.withLock({ handler in
            defer { handler = nil }
            return handler
        }) else { return false }
        handler(result)
        return true
    }

    public var wasCalled: Bool { handler.withLock { $0 == nil } }
}
