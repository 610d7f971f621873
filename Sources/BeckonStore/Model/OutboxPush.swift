import APNSCore
import BeckonProtocol
import Foundation

/// A push in the outbox: decided by the planner, written before it is sent (design rule 9).
/// It holds the request as rendered when it was decided, so the dispatcher sends exactly that;
/// only the device token is read at send time (the device may have registered a new one).
public struct OutboxPush: Hashable, Sendable {
    /// The outbox's key, a lowercase UUID, the same on every attempt: the planner's push id. It is
    /// also the `apns-id` header unless the caller chose its own (gorush's `apns_id`, which may be
    /// shared by several pushes), kept in `notification.apnsID`.
    public var id: String
    public var device: DeviceRef
    public var tokenKind: PushTokenKind
    /// Why it was decided and under which strategy: the wake report's dimensions.
    public var reason: PushReason
    public var strategy: DeliveryStrategy
    /// Headers and body, as APNs will receive them.
    public var notification: APNSRenderedNotification
    public var messageCount: Int
    /// The messages it stands for, linked in the store for their traces (`MessageTraceStore`);
    /// empty for a push no message asked for (a clear-all, a badge update). Not read back with
    /// the push: sending needs only the request.
    public var messageIDs: [String]
    /// A push that rings a call, and the time after which it must not be sent (rule 6).
    public var ringingCallID: String?
    public var ringingUntil: Date?
    public var attempts: Int
    public var createdAt: Date
    /// Set when the deciding node's dispatcher takes the push as it is saved: the row is written
    /// claimed until then (as if `claimPushes` had taken it), so the common case costs no claim.
    /// If that node dies first, the push is due again when the claim runs out.
    public var claimedUntil: Date?

    /// The `apns-id` header when the caller chose it (not the outbox key), as the store keeps it.
    package var callerAPNsID: String? {
        let header = notification.apnsID.lowercaseString
        return header == id ? nil : header
    }

    public init(
        device: DeviceRef, tokenKind: PushTokenKind, reason: PushReason, strategy: DeliveryStrategy,
        notification: APNSRenderedNotification, messageCount: Int, messageIDs: [String] = [], ringingCallID: String? = nil,
        ringingUntil: Date? = nil, attempts: Int = 0, createdAt: Date, id: UUID? = nil
    ) {
        self.messageIDs = messageIDs
        self.ringingCallID = ringingCallID
        self.ringingUntil = ringingUntil
        self.id = (id ?? notification.apnsID).lowercaseString
        self.device = device
        self.tokenKind = tokenKind
        self.reason = reason
        self.strategy = strategy
        self.notification = notification
        self.messageCount = messageCount
        self.attempts = attempts
        self.createdAt = createdAt
    }
}
