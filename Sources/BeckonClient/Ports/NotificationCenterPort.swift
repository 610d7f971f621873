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
}
