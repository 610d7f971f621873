import Foundation

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
