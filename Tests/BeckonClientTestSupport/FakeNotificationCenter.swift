import BeckonClient
import BeckonProtocol

/// The notification centre as a dictionary, with a log of what happened.
package actor FakeNotificationCenter: NotificationCenterPort {
    package private(set) var delivered: [String: NotificationContent] = [:]
    package private(set) var added: [String] = []
    package private(set) var removed: [String] = []
    package private(set) var badge: Int?
    package var failAdds = false

    package init() {}

    package func add(identifier: String, content: NotificationContent) async throws {
        if failAdds { throw FakeFailure() }
        added.append(identifier)
        delivered[identifier] = content
    }

    package func deliveredIdentifiers() async -> Set<String> { Set(delivered.keys) }

    /// As iOS's delivered notifications read: the messages in each one's `beckon.ids`.
    package func deliveredMessages() async -> [String: [String]] {
        delivered.reduce(into: [:]) { shown, entry in
            let ids = BeckonPushPayload(payload: .object(entry.value.userInfo))?.ids ?? []
            shown[entry.key] = ids.isEmpty ? [entry.key] : ids
        }
    }

    package func removeDelivered(identifiers: [String]) async {
        for identifier in identifiers where delivered.removeValue(forKey: identifier) != nil {
            removed.append(identifier)
        }
    }

    package func setBadge(_ count: Int) async {
        badge = count
        // iOS: badge 0 clears the app's notifications (seed 000).
        if count == 0 { delivered.removeAll() }
    }

    /// What iOS does on its own: shows a remote alert, or the user swipes one away.
    package func show(_ identifier: String, _ content: NotificationContent = NotificationContent(body: "remote")) {
        delivered[identifier] = content
    }

    package func dismiss(_ identifier: String) { delivered[identifier] = nil }

    package func setFailAdds(_ fail: Bool) { failAdds = fail }
}

package struct FakeFailure: Error {
    package init() {}
}
