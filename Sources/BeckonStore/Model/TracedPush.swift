import Foundation

/// A push that stood for a message, with every attempt at it: one line of a message's trace.
public struct TracedPush: Hashable, Sendable {
    /// The outbox key (the planner's push id).
    public var id: String
    public var device: DeviceRef
    public var reason: String
    public var strategy: String
    /// `apns-push-type`, `apns-priority`, `apns-collapse-id` and `apns-id` as sent.
    public var pushType: String
    public var priority: Int
    public var collapseID: String?
    public var apnsID: String
    /// How many messages the push stood for (an alert may summarise several).
    public var messageCount: Int
    public var createdAt: Date
    /// `pending`, `sent` or `failed`.
    public var state: String
    public var attempts: [PushAttempt]
    /// Whether the app connected after it (rule 10): `observed`, `missed`, or nil.
    public var wake: String?
    public var wakeLatency: TimeInterval?
    /// When the wake outcome was recorded: the app's connection, or the reconnect window's end.
    public var wakeAt: Date?

    public init(
        id: String, device: DeviceRef, reason: String, strategy: String, pushType: String, priority: Int,
        collapseID: String?, apnsID: String, messageCount: Int, createdAt: Date, state: String,
        attempts: [PushAttempt] = [], wake: String? = nil, wakeLatency: TimeInterval? = nil, wakeAt: Date? = nil
    ) {
        self.wakeAt = wakeAt
        self.id = id
        self.device = device
        self.reason = reason
        self.strategy = strategy
        self.pushType = pushType
        self.priority = priority
        self.collapseID = collapseID
        self.apnsID = apnsID
        self.messageCount = messageCount
        self.createdAt = createdAt
        self.state = state
        self.attempts = attempts
        self.wake = wake
        self.wakeLatency = wakeLatency
    }
}
