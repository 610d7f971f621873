// iOS only: built where CallKit exists. A translation, no decisions (docs/client-sdk.md).
#if canImport(CallKit)
import BeckonClient
import BeckonProtocol
import CallKit
import Foundation

/// `CallReporterPort` over CallKit's `CXProvider`. Keep one for the app's life and give its
/// provider your `CXProviderDelegate` (answer, end, audio session).
public final class CallKitReporter: CallReporterPort, @unchecked Sendable {
    public let provider: CXProvider

    public init(provider: CXProvider) {
        self.provider = provider
    }

    /// Reports the call now: `reportNewIncomingCall` is called before this returns, which is
    /// what PushKit checks (apns.md E.6). A call already over is ended as soon as CallKit has
    /// it, as Element X's `reportImmediatelyEndedCall` does.
    public func report(_ report: CallReport) {
        let update = CXCallUpdate()
        update.remoteHandle = CXHandle(type: .generic, value: report.display.handle)
        update.localizedCallerName = report.display.callerName
        update.hasVideo = report.display.hasVideo
        let uuid = report.call.uuid
        var endedReason: CXCallEndedReason?
        if case .alreadyEnded(let outcome) = report.kind { endedReason = Self.reason(outcome) }
        let reason = endedReason
        provider.reportNewIncomingCall(with: uuid, update: update) { [self] _ in
            if let reason { provider.reportCall(with: uuid, endedAt: Date(), reason: reason) }
        }
    }

    public func endCall(_ call: CallIdentity, outcome: CallEndOutcome) {
        provider.reportCall(with: call.uuid, endedAt: Date(), reason: Self.reason(outcome))
    }

    static func reason(_ outcome: CallEndOutcome) -> CXCallEndedReason {
        switch outcome {
        case .answeredElsewhere: .answeredElsewhere
        case .declined: .declinedElsewhere
        case .cancelled: .remoteEnded
        case .missed: .unanswered
        }
    }
}
#endif
