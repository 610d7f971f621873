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
        notification: APNSRenderedNotification, messageCount: Int, ringingCallID: String? = nil,
        ringingUntil: Date? = nil, attempts: Int = 0, createdAt: Date, id: UUID? = nil
    ) {
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

/// What one attempt at sending an outbox push came to.
public enum PushAttemptResult: Hashable, Sendable {
    /// APNs accepted it (200).
    case sent(at: Date)
    /// APNs refused it for good, or it expired: `status` 0 when there was no answer.
    case failed(status: Int, reason: String?, at: Date)
    /// No answer, or a 429/5xx after the client's own retries: try again at `nextAttempt`.
    case retry(status: Int, reason: String?, nextAttempt: Date)
}

/// Whether the device connected after a push (rule 10): observed with its latency, or missed.
public struct WakeOutcome: Hashable, Sendable {
    /// The device the push went to (whose planner observed the outcome).
    public var device: DeviceRef
    public var pushID: String
    /// The latency when the device connected; nil when the reconnect window passed without it.
    public var latency: TimeInterval?

    public init(device: DeviceRef, pushID: String, latency: TimeInterval?) {
        self.device = device
        self.pushID = pushID
        self.latency = latency
    }
}

/// What the planner decided in one step, saved in one transaction.
public struct DeliveryBatch: Sendable {
    public var states: [DeliveryState] = []
    public var pushes: [OutboxPush] = []
    public var wakes: [WakeOutcome] = []

    public init(states: [DeliveryState] = [], pushes: [OutboxPush] = [], wakes: [WakeOutcome] = []) {
        self.states = states
        self.pushes = pushes
        self.wakes = wakes
    }

    public var isEmpty: Bool { states.isEmpty && pushes.isEmpty && wakes.isEmpty }
}

/// One push as the delivery report sees it.
public struct PushRecord: Hashable, Sendable {
    public var reason: String
    public var strategy: String
    /// `apns-push-type` as sent (`background`, `alert`, `voip`); nil for rows from before v6.
    public var pushType: String?
    public var state: String
    public var status: Int?
    public var messageCount: Int
    /// "observed", "missed" or nil (not measured yet, or not a push that waits for the app).
    public var wake: String?
    public var wakeLatency: TimeInterval?
    /// When the push was decided (the status page charts records by it).
    public var createdAt: Date
    /// APNs' `reason` for a refused push (`BadDeviceToken`, `Unregistered`, …); nil otherwise.
    public var apnsReason: String?

    public init(
        reason: String, strategy: String, pushType: String? = nil, state: String, status: Int?, messageCount: Int,
        wake: String?, wakeLatency: TimeInterval?, createdAt: Date = Date(timeIntervalSince1970: 0), apnsReason: String? = nil
    ) {
        self.createdAt = createdAt
        self.apnsReason = apnsReason
        self.reason = reason
        self.strategy = strategy
        self.pushType = pushType
        self.state = state
        self.status = status
        self.messageCount = messageCount
        self.wake = wake
        self.wakeLatency = wakeLatency
    }
}

/// What ending a call came to (`BeckonStore.endCall`).
public enum CallEndResult: Hashable, Sendable {
    /// Ended now: these users were the call's recipients.
    case ended(users: [UserRef], at: Date)
    /// Ended before, with this outcome (the same call ended again is answered the same way).
    case alreadyEnded(outcome: String, at: Date)
}
