import Foundation

/// One request, ready for any transport: `:path`, headers and body, with Apple's limits checked.
public struct APNSRequest: Sendable, Hashable {
    public var deviceToken: APNSDeviceToken
    public var pushType: APNSPushType
    public var topic: String
    public var priority: APNSPriority
    public var expiration: APNSExpiration
    public var collapseID: String?
    /// Always set: the client picks one when the caller did not, so every retry reuses it.
    public var apnsID: UUID {
        didSet { apnsIDHeader = apnsID.lowercaseString }
    }
    /// `apns-id` as sent (lowercase, as Apple writes it), formatted once, not on every attempt.
    public private(set) var apnsIDHeader: String
    public var payload: [UInt8]

    /// Builds the request, shortening alert text to fit when the notification allows it.
    public init<Notification: APNSNotification>(
        _ notification: Notification, to deviceToken: APNSDeviceToken, bundleID: String
    ) throws(APNSPayloadError) {
        self.init(try APNSRenderedNotification(notification, bundleID: bundleID), to: deviceToken)
    }

    /// The request for a notification rendered earlier (the push outbox stores them rendered,
    /// so what is sent is exactly what was decided).
    public init(_ rendered: APNSRenderedNotification, to deviceToken: APNSDeviceToken) {
        self.deviceToken = deviceToken
        self.pushType = rendered.pushType
        self.topic = rendered.topic
        self.priority = rendered.priority
        self.expiration = rendered.expiration
        self.collapseID = rendered.collapseID
        self.apnsID = rendered.apnsID
        self.apnsIDHeader = rendered.apnsID.lowercaseString
        self.payload = rendered.payload
    }

    /// `:path` = `/3/device/<hex token>`.
    public var path: String { deviceToken.path }

    /// The APNs headers (not the pseudo-headers, not `authorization`), in a stable order.
    public var headers: [(name: String, value: String)] {
        var headers: [(String, String)] = [
            ("apns-push-type", pushType.rawValue),
            ("apns-topic", topic),
            ("apns-priority", priority.headerValue),
            ("apns-id", apnsIDHeader),
        ]
        if let value = expiration.headerValue { headers.append(("apns-expiration", value)) }
        if let collapseID { headers.append(("apns-collapse-id", collapseID)) }
        return headers
    }

    public static func == (lhs: APNSRequest, rhs: APNSRequest) -> Bool {
        lhs.deviceToken == rhs.deviceToken && lhs.apnsID == rhs.apnsID && lhs.payload == rhs.payload
            && lhs.topic == rhs.topic && lhs.pushType == rhs.pushType && lhs.priority == rhs.priority
            && lhs.expiration == rhs.expiration && lhs.collapseID == rhs.collapseID
    }

    public func hash(into hasher: inout Hasher) { hasher.combine(apnsID) }
}
