import BeckonJSON

/// The push the notification service extension received (`UNNotificationRequest`): its
/// identifier and its `userInfo` as JSON (with `aps`).
public struct IncomingNotification: Hashable, Sendable {
    public var identifier: String
    public var payload: JSONValue

    public init(identifier: String, payload: JSONValue) {
        self.identifier = identifier
        self.payload = payload
    }
}
