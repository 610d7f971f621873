import BeckonJSON

extension SimulatedPhone {
    /// Puts a notification on screen. The same identifier replaces the one shown (apns.md E.2);
    /// a message already shown under another identifier, or shown and removed before, is shown
    /// twice — what a user notices.
    mutating func show(
        _ identifier: String, messages: [String], text: String, payload: JSONValue, _ actions: inout [PhoneAction]
    ) {
        for message in messages {
            if let earlier = shownMessages[message], earlier.identifier != identifier || earlier.removed {
                actions.append(
                    .record(.violation(.shownTwice, detail: "message \(message) in \(earlier.identifier) and \(identifier)")))
            }
            shownMessages[message] = (identifier, false)
        }
        notifications.removeAll { $0.identifier == identifier }
        notifications.append(
            ShownNotification(identifier: identifier, messages: messages, text: text, payload: payload, shownAt: now))
        actions.append(.record(.notificationShown(identifier: identifier, messages: messages, text: text)))
    }

    mutating func remove(_ identifier: String, why: String, _ actions: inout [PhoneAction]) {
        guard let index = notifications.firstIndex(where: { $0.identifier == identifier }) else { return }
        let gone = notifications.remove(at: index)
        for message in gone.messages where shownMessages[message]?.identifier == identifier {
            shownMessages[message]?.removed = true
        }
        actions.append(.record(.notificationRemoved(identifier: identifier, why: why)))
    }

    /// Seed 000: `{"aps":{"badge":0}}` clears every notification of the app.
    mutating func clearAll(_ actions: inout [PhoneAction]) {
        for notification in notifications { remove(notification.identifier, why: "clear-all", &actions) }
    }
}
