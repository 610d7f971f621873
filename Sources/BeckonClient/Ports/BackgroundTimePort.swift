/// Extra time to finish when the app leaves the foreground (`UIApplication.beginBackgroundTask`):
/// the app uses it to say `bye`, commit, and let the lease go before iOS suspends it — never
/// holding a lock while suspended (docs/design.md, "A lease, not a held file lock").
public protocol BackgroundTimePort: Sendable {
    /// Starts a background task; `expired` runs if iOS wants the time back first.
    func begin(_ name: String, expired: @escaping @Sendable () -> Void) -> BackgroundTaskToken
    func end(_ token: BackgroundTaskToken)
}
