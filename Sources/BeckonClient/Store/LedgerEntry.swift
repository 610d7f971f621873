import BeckonProtocol
import Foundation

/// One message in the notification ledger: the record, shared by the app and its extension, of
/// which messages have had a notification, so none is shown twice (docs/design.md, "Nothing
/// shown twice"), and of which are showing, so a read elsewhere removes exactly those (rule 7).
public struct LedgerEntry: Hashable, Sendable {
    public enum State: String, Hashable, Sendable {
        /// On screen, as far as the device knows.
        case showing
        /// Removed (read elsewhere, cleared by a badge-0 push, dismissed). Kept so the message
        /// is never notified again.
        case removed
    }

    public var messageID: String
    /// The notification that shows it: the message id for local notifications and for alerts
    /// (the server's collapse id, apns.md E.2); the newest message's id when one alert stands
    /// for several.
    public var notificationID: String
    public var state: State
    public var shownBy: SyncRole
    public var shownAt: Date
    /// The message was read (its notification may still stand for other, unread messages).
    public var messageRead: Bool
}
