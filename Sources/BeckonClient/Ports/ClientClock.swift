import Foundation

/// Time, as the core sees it: a port so that tests and the device simulator run every deadline
/// (the 30 s background budget, the extension's 25 s, reconnect backoff, lease renewal) in
/// virtual time instead of waiting.
public protocol ClientClock: Sendable {
    /// Wall time. Lease expiries are compared across processes (app and extension), so both
    /// read the same clock: the system's.
    func now() -> Date
    /// Suspends for `duration`; throws `CancellationError` when the task is cancelled.
    func sleep(for duration: Duration) async throws
}

/// The real clock.
public struct SystemClock: ClientClock {
    public init() {}

    public func now() -> Date { Date() }

    public func sleep(for duration: Duration) async throws { try await Task.sleep(for: duration) }
}
