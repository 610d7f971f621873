import BeckonClient
import BeckonProtocol

/// CallKit on the simulated phone: records what the app reports, and remembers whether the
/// PushKit handler reported a call before it returned (apns.md E.6).
final class PhoneCallKit: CallReporterPort {
    let device: String
    let timeline: Timeline
    private let reported = Locked(false)

    init(device: String, timeline: Timeline) {
        self.device = device
        self.timeline = timeline
    }

    func reportIncomingCall(
        _ call: CallIdentity, display: CallDisplay, completion: @escaping @Sendable (CallRefusal?) -> Void
    ) {
        reported.withLock { $0 = true }
        timeline.record(device, .callReported(callID: call.callID))
        completion(nil)
    }

    func endCall(_ call: CallIdentity, outcome: CallEndOutcome) {
        timeline.record(device, .callEnded(callID: call.callID, outcome: outcome.rawValue))
    }

    /// Whether a call was reported since the last time this was asked.
    func takeReported() -> Bool {
        reported.withLock { reported in
            defer { reported = false }
            return reported
        }
    }
}
