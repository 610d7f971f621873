/// Extra time to finish when the app leaves the foreground (`UIApplication.beginBackgroundTask`):
/// the app uses it to say `bye`, commit, and let the lease go before iOS suspends it — never
/// holding a lock while suspended (docs/design.md, "A lease, not a held file lock").
///
/// The SDK wraps every task in a `BackgroundActivity`, which ends it exactly once and, when the
/// time runs out, inside the expiration handler (apns.md E.9): the adapter only forwards.
public protocol BackgroundTimePort: Sendable {
    /// Starts a background task. iOS calls `expired` on the main thread shortly before the time
    /// runs out; the SDK ends the task (`end`) before `expired` returns.
    func begin(_ name: String, expired: @escaping @Sendable () -> Void) -> BackgroundTaskToken
    func end(_ token: BackgroundTaskToken)
}
