import APNSCore
import BeckonProtocol
import Foundation

/// One push the planner decided to send. The driver stores it in the push outbox in the same
/// transaction as the planner state (rule 9: a push in the outbox is sent at least once), and the
/// APNs client sends `notification` to the device's `token`.
public struct PlannedPush: Hashable, Sendable {
    /// Becomes `apns-id` (also set on the notification), so retries and APNs' answers, and the
    /// wake measurement at the next connection (rule 10), all refer to this push.
    public var id: UUID
    /// Which of the device's tokens: `.voip` only for calls (rule 6), otherwise `.remote`.
    public var token: PushTokenKind
    public var reason: PushReason
    /// The device's effective strategy when the push was planned (metrics, rule 10).
    public var strategy: DeliveryStrategy
    /// The messages the push is for (to fetch, to ring, or to clear).
    public var messageIDs: [String]
    public var notification: PlannedNotification
    /// When the planner decided it: the start of the wake latency.
    public var plannedAt: Date
    /// For a push that rings a call (VoIP, or a ringing alert): the call, and the time after which
    /// it must not be sent, retries included (rule 6): the call's timeout. The dispatcher also
    /// drops it once the backend ended the call.
    public var ringing: (callID: String, until: Date)?

    public init(
        id: UUID, token: PushTokenKind, reason: PushReason, strategy: DeliveryStrategy,
        messageIDs: [String], notification: PlannedNotification, plannedAt: Date,
        ringing: (callID: String, until: Date)? = nil
    ) {
        self.id = id
        self.token = token
        self.reason = reason
        self.strategy = strategy
        self.messageIDs = messageIDs
        self.notification = notification
        self.plannedAt = plannedAt
        self.ringing = ringing
    }

    public static func == (lhs: PlannedPush, rhs: PlannedPush) -> Bool {
        lhs.id == rhs.id && lhs.token == rhs.token && lhs.reason == rhs.reason && lhs.strategy == rhs.strategy
            && lhs.messageIDs == rhs.messageIDs && lhs.notification == rhs.notification && lhs.plannedAt == rhs.plannedAt
            && lhs.ringing?.callID == rhs.ringing?.callID && lhs.ringing?.until == rhs.ringing?.until
    }

    public func hash(into hasher: inout Hasher) { hasher.combine(id) }

    /// The notification as the outbox keeps it and APNs receives it, for the app's bundle id.
    public func rendered(bundleID: String) throws(APNSPayloadError) -> APNSRenderedNotification {
        try notification.rendered(bundleID: bundleID)
    }
}
