import Foundation

/// A notification rendered for APNs: its headers and its body, checked against Apple's limits —
/// everything of a request but the device token, which may change between deciding a push and
/// sending it (the device registers again).
///
/// Built from a typed notification, so a wrong header/payload combination cannot be rendered;
/// restored from storage only through `init(restoring:)`, which checks the same rules again.
public struct APNSRenderedNotification: Sendable, Hashable {
    public let pushType: APNSPushType
    public let topic: String
    public let priority: APNSPriority
    public let expiration: APNSExpiration
    public let collapseID: String?
    public let apnsID: UUID
    /// The body as sent: shortened to fit if the notification allowed it.
    public let payload: [UInt8]

    /// Renders a notification, shortening alert text to fit when it allows it (docs/apns.md A.5).
    public init<Notification: APNSNotification>(_ notification: Notification, bundleID: String) throws(APNSPayloadError) {
        try notification.validate()
        if let collapseID = notification.collapseID, collapseID.utf8.count > 64 {
            throw .collapseIDTooLong(bytes: collapseID.utf8.count)  // Apple: at most 64 bytes.
        }
        let limit = Notification.pushType.maximumPayloadSize
        var candidate = notification
        var payload = candidate.encodedPayload()
        while payload.count > limit {
            guard candidate.truncate(by: payload.count - limit) else {
                throw .tooLarge(size: payload.count, limit: limit)
            }
            payload = candidate.encodedPayload()
        }
        self.pushType = Notification.pushType
        self.topic = notification.topic(forBundleID: bundleID)
        self.priority = notification.priority
        self.expiration = notification.expiration
        self.collapseID = notification.collapseID
        self.apnsID = notification.apnsID ?? UUID.randomV4()
        self.payload = payload
    }

    /// A notification rendered earlier and read back from storage. Apple's rules that the typed
    /// notifications guarantee are checked again, so a damaged row cannot become a request Apple
    /// would refuse: the size limit per push type, a collapse id of at most 64 bytes, and
    /// priority 5 for background pushes (docs/apns.md D.4).
    public init(
        restoring pushType: APNSPushType, topic: String, priority: APNSPriority, expiration: APNSExpiration,
        collapseID: String?, apnsID: UUID, payload: [UInt8]
    ) throws(APNSPayloadError) {
        guard payload.count <= pushType.maximumPayloadSize else {
            throw .tooLarge(size: payload.count, limit: pushType.maximumPayloadSize)
        }
        if let collapseID, collapseID.utf8.count > 64 { throw .collapseIDTooLong(bytes: collapseID.utf8.count) }
        if pushType == .background, priority != .considerPower { throw .priorityNotAllowed(pushType) }
        self.pushType = pushType
        self.topic = topic
        self.priority = priority
        self.expiration = expiration
        self.collapseID = collapseID
        self.apnsID = apnsID
        self.payload = payload
    }
}
