import BeckonJSON
import BeckonProtocol
import Foundation

/// Calls on the device: turns every VoIP push into a report to CallKit, synchronously, and ends
/// the CallKit call when the server says it ended elsewhere (`callEnded`, rule 6).
public final class CallCoordinator: Sendable {
    private struct State {
        /// Calls reported to CallKit by this process and not ended.
        var ringing: [String: CallIdentity] = [:]
        /// Ends heard of that the store may not have (no lease at the time).
        var ended: [String: CallEndOutcome] = [:]
    }

    let store: ClientStore?
    let reporter: any CallReporterPort
    let sealKey: Data?
    private let state = Locked(State())

    /// Made by `BeckonApp`; `sealKey` opens sealed call hints.
    public init(store: ClientStore?, reporter: any CallReporterPort, sealKey: Data? = nil) {
        self.store = store
        self.reporter = reporter
        self.sealKey = sealKey
    }

    /// PushKit's handler, synchronous as PushKit requires (apns.md E.6): the report is made
    /// before this returns, whatever `handler` decides. A call this process heard had ended, or a
    /// push that names no call, is reported and ended without asking `handler`; one that the store
    /// says ended (heard by another process) is ended right after its report.
    ///
    /// `completion` is PushKit's completion handler: called once CallKit has answered the
    /// report, not before (apns.md E.9). A call CallKit refused (Focus, Do Not Disturb, a
    /// blocked caller) is not ringing here.
    @discardableResult
    public func receiveVoIPPush(
        _ payload: JSONValue, handler: (VoIPPush) -> CallReport, completion: @escaping @Sendable () -> Void = {}
    ) -> CallReport {
        let push = VoIPPush(payload: payload, sealKey: sealKey)
        let report: CallReport
        // Only what this process knows: the store may need opening (a file, coordination, a
        // migration), which must not delay the report (apns.md E.6). It is read after.
        if let outcome = state.withLock({ $0.ended[push.call.callID] }) {
            report = .alreadyEnded(push, outcome: outcome)
        } else if !push.isBeckonCall {
            report = .alreadyEnded(push, outcome: .cancelled)
        } else {
            report = handler(push)
        }
        if report.kind == .incoming {
            state.withLock { $0.ringing[report.call.callID] = report.call }
        }
        let reporter = self.reporter
        reporter.reportIncomingCall(report.call, display: report.display) { [state] refusal in
            switch (report.kind, refusal) {
            case (.alreadyEnded(let outcome), nil):
                // Shown for a moment, then ended, as Element X does for a call already over.
                reporter.endCall(report.call, outcome: outcome)
            case (.incoming, .some(let refusal)) where refusal != .alreadyReported:
                _ = state.withLock { $0.ringing.removeValue(forKey: report.call.callID) }
            default:
                break
            }
            completion()
        }
        if report.kind == .incoming, store != nil {
            // Ended while this process was not running (a relaunch by PushKit): end it now.
            Task.detached { [self] in
                if let outcome = (try? store?.callOutcome(report.call.callID)) ?? nil, isRinging(report.call.callID) {
                    callEnded(report.call.callID, outcome: outcome, as: nil)
                }
            }
        }
        return report
    }

    /// The call ended elsewhere: end it in CallKit if it rings here, and remember, so a VoIP
    /// push that arrives after is reported as already ended.
    package func callEnded(_ callID: String, outcome: CallEndOutcome, as writer: LeaseGuard?) {
        let ringing = state.withLock { state -> CallIdentity? in
            state.ended[callID] = outcome
            return state.ringing.removeValue(forKey: callID)
        }
        if let writer { try? store?.recordCallEnded(callID, outcome: outcome, as: writer) }
        if let ringing { reporter.endCall(ringing, outcome: outcome) }
    }

    /// The user answered or declined in CallKit: it no longer rings.
    public func callFinished(_ callID: String) {
        _ = state.withLock { $0.ringing.removeValue(forKey: callID) }
    }

    /// The same, by CallKit's UUID (`CXAnswerCallAction.callUUID`, `CXEndCallAction.callUUID`).
    public func callFinished(uuid: UUID) {
        state.withLock { state in
            if let callID = state.ringing.first(where: { $0.value.uuid == uuid })?.key { state.ringing[callID] = nil }
        }
    }

    /// Whether `callID` rings here.
    public func isRinging(_ callID: String) -> Bool { state.withLock { $0.ringing[callID] != nil } }

    /// Calls reported here and not ended.
    public var ringingCalls: [CallIdentity] { state.withLock { Array($0.ringing.values) } }
}
