import BeckonJSON
import BeckonProtocol
import Foundation

/// `userNotificationCenter(_:didReceive:)`: what the user did with a notification — opened it,
/// dismissed it, or chose one of the app's actions (apns.md E.5).
public struct NotificationResponse: Hashable, Sendable {
    /// What the user did with the notification.
    public enum Action: Hashable, Sendable {
        /// The default action: the user opened the notification.
        case open
        /// Dismissed; iOS reports it only for a category with `customDismissAction`.
        case dismiss
        /// One of the app's `UNNotificationAction`s, by identifier, with the text typed into a
        /// text-input action.
        case custom(String, text: String?)
    }

    /// The action identifier the SDK carries out itself: the notification's messages are marked
    /// read (stored, removed, the badge lowered, the server told). Give the app's category a
    /// `UNNotificationAction` with this identifier to offer "Mark as read".
    public static let markReadAction = "BECKON_MARK_READ"

    /// The notification's identifier.
    public var identifier: String
    /// The notification's whole `userInfo`.
    public var userInfo: JSONValue
    /// What the user did.
    public var action: Action
    /// When the notification was delivered (`UNNotification.date`); nil where it is not known.
    public var date: Date?

    /// The response iOS reported (the bridge makes it from a `UNNotificationResponse`).
    public init(identifier: String, userInfo: JSONValue, action: Action, date: Date? = nil) {
        self.identifier = identifier
        self.userInfo = userInfo
        self.action = action
        self.date = date
    }

    /// The notification it answers, as the centre would have listed it while on screen.
    var delivered: DeliveredNotification {
        DeliveredNotification(identifier: identifier, messageIDs: messageIDs, date: date)
    }

    /// What opening it shows.
    public var tap: NotificationTap { NotificationTap(identifier: identifier, payload: userInfo) }

    /// The messages the notification stands for (the identifier when it names none).
    public var messageIDs: [String] {
        let ids = BeckonPushPayload(payload: userInfo)?.ids ?? []
        return ids.isEmpty ? [identifier] : ids
    }
}
