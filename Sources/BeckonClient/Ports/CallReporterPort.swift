import BeckonProtocol

/// CallKit, reduced to reporting and ending calls. `report` is synchronous on purpose: PushKit
/// checks that a call was reported before its handler returns (apns.md E.6), so the report
/// cannot wait for anything. The iOS adapter is `CallKitReporter`.
public protocol CallReporterPort: Sendable {
    /// `CXProvider.reportNewIncomingCall`; for `.alreadyEnded`, followed at once by
    /// `reportCall(with:endedAt:reason:)` (docs/design.md, "Every VoIP push ends in a reported call").
    func report(_ report: CallReport)
    /// Ends a call reported before: it was answered, declined or cancelled elsewhere (rule 6).
    func endCall(_ call: CallIdentity, outcome: CallEndOutcome)
}
