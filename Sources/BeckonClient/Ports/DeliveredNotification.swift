import Foundation

/// A notification on screen, as the notification centre lists it: what the SDK learns of alerts
/// iOS showed by itself, without the app or its extension (`NotificationCenterPort`).
public struct DeliveredNotification: Hashable, Sendable {
    public var identifier: String
    /// The messages it shows (a server alert's `beckon.ids`; else its identifier).
    public var messageIDs: [String]
    /// When it was delivered (`UNNotification.date`); nil where the centre does not say.
    public var date: Date?

    public init(identifier: String, messageIDs: [String], date: Date?) {
        self.identifier = identifier
        self.messageIDs = messageIDs
        self.date = date
    }
}
