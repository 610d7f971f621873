import BeckonProtocol

/// The hub's answer to a session's `hello`: take the device's slot for its role, or close.
enum SyncRegistration: Equatable, Sendable {
    case accepted
    /// Close with `code`: an extension while the app's session is live (4002), or the server
    /// shutting down (1001).
    case refused(SyncCloseCode, reason: String, end: SyncSessionEnd)
}
