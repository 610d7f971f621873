import BeckonClient
import BeckonProtocol

/// The notification centre as a dictionary, with a log of what happened.
public actor FakeNotificationCenter: NotificationCenterPort {
    public private(set) var delivered: [String: NotificationContent] = [:]
    public private(set) var added: [String] = []
    public private(set) var removed: [String] = []
    public private(set) var badge: Int?
    public var failAdds = false

    public init() {}

    public func add(identifier: String, content: NotificationContent) async throws {
        if failAdds { throw FakeFailure() }
        added.append(identifier)
        delivered[identifier] = content
    }

    public func deliveredIdentifiers() async -> Set<String> { Set(delivered.keys) }

    /// As iOS's delivered notifications read: the messages in each one's `beckon.ids`.
    public func deliveredMessages() async -> [String: [String]] {
        delivered.reduce(into: [:]) { shown, entry in
            let ids = BeckonPushPayload(payload: .object(entry.value.userInfo))?.ids ?? []
            shown[entry.key] = ids.isEmpty ? [entry.key] : ids
        }
    }

    public func removeDelivered(identifiers: [String]) async {
        for identifier in identifiers where delivered.removeValue(forKey: identifier) != nil {
            removed.append(identifier)
        }
    }

    public func setBadge(_ count: Int) async {
        badge = count
        // iOS: badge 0 clears the app's notifications (seed 000).
        if count == 0 { delivered.removeAll() }
    }

    /// What iOS does on its own: shows a remote alert, or the user swipes one away.
    public func show(_ identifier: String, _ content: NotificationContent = NotificationContent(body: "remote")) {
        delivered[identifier] = content
    }

    public func dismiss(_ identifier: String) { delivered[identifier] = nil }

    public func setFailAdds(_ fail: Bool) { failAdds = fail }
}

public struct FakeFailure: Error {
    public init() {}
}
