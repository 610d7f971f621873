import BeckonProtocol

/// CallKit, reduced to reporting and ending calls. `reportIncomingCall` is called synchronously
/// from PushKit's handler, because PushKit checks that a call was reported before its handler
/// returns (apns.md E.6); CallKit's answer comes later, through `completion`, and only then is
/// PushKit's own completion handler called (apns.md E.9). The iOS adapter is `CallKitReporter`.
public protocol CallReporterPort: Sendable {
    /// `CXProvider.reportNewIncomingCall(with:update:completion:)`: `completion` gets nil when
    /// CallKit shows the call, or why it refused it (Focus, Do Not Disturb, a blocked caller).
    func reportIncomingCall(
        _ call: CallIdentity, display: CallDisplay, completion: @escaping @Sendable (CallRefusal?) -> Void)
    /// `CXProvider.reportCall(with:endedAt:reason:)`: a call reported before ended elsewhere
    /// (answered, declined, cancelled: rule 6), or was already over when reported.
    func endCall(_ call: CallIdentity, outcome: CallEndOutcome)
}
