import BeckonJSON
import BeckonProtocol

/// The user tapped a notification: what the app should open.
public struct NotificationTap: Hashable, Sendable {
    /// The notification's identifier (the message id for Beckon's notifications).
    public var identifier: String?
    /// The message it shows (the newest, when it stands for several).
    public var messageID: String?
    /// `thread-id`: the conversation to open.
    public var threadID: String?
    /// The notification's whole `userInfo`.
    public var payload: JSONValue

    /// A tap on the notification `identifier` whose `userInfo` is `payload`.
    public init(identifier: String?, payload: JSONValue) {
        self.identifier = identifier
        self.payload = payload
        self.messageID = BeckonPushPayload(payload: payload)?.ids.last ?? identifier
        self.threadID = payload["aps"]?["thread-id"]?.stringValue
    }

    /// What makes two reports of one tap the same tap.
    var key: String { messageID ?? identifier ?? threadID ?? "" }
}
