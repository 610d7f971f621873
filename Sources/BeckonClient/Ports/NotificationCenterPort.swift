/// The notification centre, reduced to what the SDK needs (docs/design.md, "A portable core
/// behind small ports"; Element X hides `UNUserNotificationCenter` the same way). The iOS
/// adapter is `UserNotificationCenterAdapter`; tests and the simulator use their own.
public protocol NotificationCenterPort: Sendable {
    /// Shows a local notification. Its identifier is the message id (rule 7), so it can be
    /// removed alone and a second one with the same id replaces it (apns.md E.2).
    func add(identifier: String, content: NotificationContent) async throws
    /// The identifiers of the notifications on screen now.
    func deliveredIdentifiers() async -> Set<String>
    /// Removes these notifications, if shown.
    func removeDelivered(identifiers: [String]) async
    /// Sets the app icon's badge.
    func setBadge(_ count: Int) async
    /// The notifications on screen now, each with the messages it shows: a server alert names
    /// them in its `beckon.ids`, and one alert may stand for several (else an app woken later
    /// would notify again a message the alert already shows).
    func deliveredMessages() async -> [String: [String]]
    /// The same, each with when it was delivered: how the app learns which alerts iOS showed by
    /// itself while it was away (their `shown` receipts, docs/sync-protocol.md "Receipts").
    func deliveredNotifications() async -> [DeliveredNotification]
}

extension NotificationCenterPort {
    /// Without `userInfo` to read: each notification shows the message its identifier names.
    public func deliveredMessages() async -> [String: [String]] {
        Dictionary(uniqueKeysWithValues: await deliveredIdentifiers().map { ($0, [$0]) })
    }

    /// Without dates to read: `deliveredMessages`, undated (the app dates them when it finds them).
    public func deliveredNotifications() async -> [DeliveredNotification] {
        await deliveredMessages().map { DeliveredNotification(identifier: $0.key, messageIDs: $0.value, date: nil) }
            .sorted { $0.identifier < $1.identifier }
    }
}
