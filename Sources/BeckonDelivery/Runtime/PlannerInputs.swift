import BeckonProtocol
import BeckonStore
import Foundation

// The planner (BeckonDelivery) knows nothing of the store: these build its inputs from rows.

extension PlannerDevice {
    /// From a registered device: its tokens, declared capabilities and content key.
    init(_ device: Device) {
        self.init(
            hasRemoteToken: device.pushToken != nil, hasVoIPToken: device.voipToken != nil,
            capabilities: device.capabilities, contentKey: device.contentKey)
    }
}

extension PlannedMessage {
    /// From a stored message and the recipient's unread count after it.
    /// A drop-in's badge is not put here: `NotificationFactory` takes it from `extras` (or none).
    init(_ message: Message, unreadCount: Int, extras: PushExtras? = nil) {
        self.init(
            id: message.id, kind: message.kind, urgency: message.urgency, hints: message.hints,
            expiresAt: message.expiresAt, unreadCount: unreadCount, extras: extras)
    }
}

extension CallOutcome {
    /// How the backend's outcome ends the ringing on a callee's device: an alert that replaces
    /// the ringing one says what happened (rule 6).
    init(_ outcome: CallEndOutcome) {
        switch outcome {
        case .answeredElsewhere: self = .answeredElsewhere
        case .declined: self = .declinedElsewhere
        case .cancelled, .missed: self = .endedByCaller
        }
    }
}
