import BeckonClient

/// The notification centre the SDK sees, in the app or in its extension: what it posts and
/// removes goes through the phone model, so a notification shown twice is caught where iOS would
/// show it.
struct PhoneNotificationCenter: NotificationCenterPort {
    let device: SimulatedDevice
    let clock: ProcessClock
    var isExtension = false

    func add(identifier: String, content: NotificationContent) async throws {
        guard clock.phase != .dead else { throw PhoneUnreachable() }
        await device.send(
            isExtension
                ? .extensionAddedNotification(identifier: identifier, text: content.displayText)
                : .appAddedNotification(identifier: identifier, text: content.displayText))
    }

    func deliveredIdentifiers() async -> Set<String> {
        Set(await device.phone.notifications.map(\.identifier))
    }

    func deliveredMessages() async -> [String: [String]] {
        Dictionary(await device.phone.notifications.map { ($0.identifier, $0.messages.isEmpty ? [$0.identifier] : $0.messages) })
        { $1 }
    }

    /// Dated as the phone showed them (virtual seconds since the run began, on the run's clock).
    func deliveredNotifications() async -> [DeliveredNotification] {
        await device.phone.notifications.map { shown in
            DeliveredNotification(
                identifier: shown.identifier, messageIDs: shown.messages.isEmpty ? [shown.identifier] : shown.messages,
                date: clock.base.origin.addingTimeInterval(shown.shownAt))
        }
    }

    func removeDelivered(identifiers: [String]) async {
        guard clock.phase != .dead else { return }
        await device.send(.appRemovedNotifications(identifiers))
    }

    func setBadge(_ count: Int) async {
        guard clock.phase != .dead else { return }
        await device.send(.appSetBadge(count))
    }
}

extension NotificationContent {
    /// What a person reads on the lock screen: the title and body, else the localized key.
    var displayText: String {
        let parts = [title, body].compactMap { $0 }
        return parts.isEmpty ? (locKey ?? titleLocKey ?? "") : parts.joined(separator: ": ")
    }
}
