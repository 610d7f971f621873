// iOS apps only: built where CallKit exists. A translation, no decisions (docs/client-sdk.md).
#if canImport(CallKit)
import BeckonClient
import BeckonProtocol
import CallKit
import Foundation

/// `CallReporterPort` over CallKit's `CXProvider`. Keep one for the app's life and give its
/// provider your `CXProviderDelegate` (answer, end, audio session).
public final class CallKitReporter: CallReporterPort, @unchecked Sendable {
    /// Set your `CXProviderDelegate` on it: the user's answer and the audio session are yours.
    public let provider: CXProvider

    /// Reports calls through `provider`; make one per app, at launch.
    public init(provider: CXProvider) {
        self.provider = provider
    }

    /// `reportNewIncomingCall` is called before this returns, which is what PushKit checks
    /// (apns.md E.6); CallKit's answer goes to `completion` (a refusal as `CallRefusal`).
    public func reportIncomingCall(
        _ call: CallIdentity, display: CallDisplay, completion: @escaping @Sendable (CallRefusal?) -> Void
    ) {
        let update = CXCallUpdate()
        update.remoteHandle = CXHandle(type: .generic, value: display.handle)
        update.localizedCallerName = display.callerName
        update.hasVideo = display.hasVideo
        provider.reportNewIncomingCall(with: call.uuid, update: update) { error in
            completion(error.map { CallRefusal(incomingCallErrorCode: ($0 as? CXErrorCodeIncomingCallError)?.code.rawValue) })
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
