import BeckonProtocol

/// What a VoIP push handler must return, and the only thing it can: a call to report to CallKit
/// now. Apple kills an app that returns from its PushKit handler without reporting a call, and
/// after a few times stops sending it VoIP pushes (apns.md E.6; rule 6), so there is no "ignore"
/// case: a call that is already over is reported and ended at once (docs/design.md, "Every VoIP
/// push ends in a reported call").
public struct CallReport: Hashable, Sendable {
    /// Whether the call rings or is reported and ended at once.
    public enum Kind: Hashable, Sendable {
        /// Ring: `reportNewIncomingCall`.
        case incoming
        /// Report, then end at once with this outcome.
        case alreadyEnded(CallEndOutcome)
    }

    /// The call, as CallKit knows it.
    public let call: CallIdentity
    /// Ringing, or ended already.
    public let kind: Kind
    /// What the incoming-call screen shows.
    public let display: CallDisplay

    private init(call: CallIdentity, kind: Kind, display: CallDisplay) {
        self.call = call
        self.kind = kind
        self.display = display
    }

    /// Ring for this push's call. `display` defaults to what the push's hints say.
    public static func incoming(_ push: VoIPPush, display: CallDisplay? = nil) -> CallReport {
        CallReport(call: push.call, kind: .incoming, display: display ?? CallDisplay(hints: push.hints))
    }

    /// The call is already over (answered elsewhere, cancelled...): report it and end it.
    public static func alreadyEnded(_ push: VoIPPush, outcome: CallEndOutcome) -> CallReport {
        CallReport(call: push.call, kind: .alreadyEnded(outcome), display: CallDisplay(hints: push.hints))
    }
}
