// iOS only: built where UserNotifications exists. A translation, no decisions
// (docs/client-sdk.md, "Which files build where").
#if canImport(UserNotifications)
import BeckonClient
import BeckonJSON
import BeckonProtocol
import Foundation
import UserNotifications

/// `NotificationCenterPort` over `UNUserNotificationCenter`.
public struct UserNotificationCenterAdapter: NotificationCenterPort {
    public init() {}

    public func add(identifier: String, content: NotificationContent) async throws {
        let request = UNNotificationRequest(identifier: identifier, content: content.userNotificationContent(), trigger: nil)
        try await UNUserNotificationCenter.current().add(request)
    }

    public func deliveredIdentifiers() async -> Set<String> {
        Set(await UNUserNotificationCenter.current().deliveredNotifications().map(\.request.identifier))
    }

    public func deliveredMessages() async -> [String: [String]] {
        Dictionary(await deliveredNotifications().map { ($0.identifier, $0.messageIDs) }) { first, _ in first }
    }

    public func deliveredNotifications() async -> [DeliveredNotification] {
        await UNUserNotificationCenter.current().deliveredNotifications().map { notification in
            let request = notification.request
            let ids = JSONValue(userInfo: request.content.userInfo).flatMap(BeckonPushPayload.init(payload:))?.ids ?? []
            return DeliveredNotification(identifier: request.identifier, messageIDs: ids.isEmpty ? [request.identifier] : ids, date: notification.date)
        }
    }

    public func removeDelivered(identifiers: [String]) async {
        UNUserNotificationCenter.current().removeDeliveredNotifications(withIdentifiers: identifiers)
    }

    public func setBadge(_ count: Int) async {
        try? await UNUserNotificationCenter.current().setBadgeCount(count)
    }
}

extension NotificationContent {
    /// As UserNotifications' content; `base` keeps what the push set that the SDK does not
    /// touch (attachments, interruption level).
    public func userNotificationContent(base: UNNotificationContent? = nil) -> UNMutableNotificationContent {
        let content = (base?.mutableCopy() as? UNMutableNotificationContent) ?? UNMutableNotificationContent()
        if let title { content.title = title }
        if let titleLocKey { content.title = NSString.localizedUserNotificationString(forKey: titleLocKey, arguments: titleLocArgs) }
        if let subtitle { content.subtitle = subtitle }
        if let body { content.body = body }
        if let locKey { content.body = NSString.localizedUserNotificationString(forKey: locKey, arguments: locArgs) }
        if let threadID { content.threadIdentifier = threadID }
        if let category { content.categoryIdentifier = category }
        if let sound { content.sound = sound == "default" ? .default : UNNotificationSound(named: UNNotificationSoundName(sound)) }
        if let badge { content.badge = NSNumber(value: badge) }
        if !userInfo.isEmpty, let info = JSONValue.object(userInfo).foundationObject as? [AnyHashable: Any] {
            content.userInfo = content.userInfo.merging(info) { _, new in new }
        }
        return content
    }
}
#endif
