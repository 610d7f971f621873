import BeckonClient

/// The notification centre as a dictionary, with a log of what happened.
actor FakeNotificationCenter: NotificationCenterPort {
    private(set) var delivered: [String: NotificationContent] = [:]
    private(set) var added: [String] = []
    private(set) var removed: [String] = []
    private(set) var badge: Int?
    var failAdds = false

    func add(identifier: String, content: NotificationContent) async throws {
        if failAdds { throw FakeFailure() }
        added.append(identifier)
        delivered[identifier] = content
    }

    func deliveredIdentifiers() async -> Set<String> { Set(delivered.keys) }

    func removeDelivered(identifiers: [String]) async {
        for identifier in identifiers where delivered.removeValue(forKey: identifier) != nil {
            removed.append(identifier)
        }
    }

    func setBadge(_ count: Int) async {
        badge = count
        // iOS: badge 0 clears the app's notifications (seed 000).
        if count == 0 { delivered.removeAll() }
    }

    /// What iOS does on its own: shows a remote alert, or the user swipes one away.
    func show(_ identifier: String, _ content: NotificationContent = NotificationContent(body: "remote")) {
        delivered[identifier] = content
    }

    func dismiss(_ identifier: String) { delivered[identifier] = nil }

    func setFailAdds(_ fail: Bool) { failAdds = fail }
}

struct FakeFailure: Error {}
