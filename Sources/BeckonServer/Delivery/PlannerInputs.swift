import BeckonDelivery
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
    init(_ message: Message, unreadCount: Int) {
        self.init(
            id: message.id, kind: message.kind, urgency: message.urgency, hints: message.hints,
            expiresAt: message.expiresAt, unreadCount: unreadCount)
    }
}
