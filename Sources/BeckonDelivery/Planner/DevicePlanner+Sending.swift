import BeckonProtocol
import Foundation

extension DevicePlanner {
    /// Rule 3: wake the app for `messages` without overspending background pushes. A wake already
    /// in flight covers them (the waking app syncs everything); otherwise they join what is owed,
    /// and the owed push goes out now if the throttle has a slot, else when it frees (coalesced:
    /// however many messages arrive meanwhile, one push).
    mutating func requestWake(
        for messages: [PlannedMessage], reason: PushReason, factory: NotificationFactory, newPushID: () -> UUID
    ) -> [PlannerAction] {
        if var watch {
            for message in messages where !watch.messages.contains(where: { $0.id == message.id }) {
                watch.messages.append(message)
            }
            watch.messages = Array(watch.messages.suffix(max(policy.maximumIDsPerPush, 1)))
            self.watch = watch
            return []
        }
        var owed = self.owed ?? OwedBackground()
        owed.owe(messages, reason: reason, now: factory.now, limit: policy.maximumIDsPerPush)
        self.owed = owed
        return flushOwed(factory: factory, newPushID: newPushID)
    }

    /// Sends what is owed as one background push if a slot is free. Otherwise, once a wake has
    /// been owed for `throttledAlertDelay`, its messages go out as an alert with
    /// `content-available` instead (rule 3: never count on a background push); owed clears keep
    /// waiting for a slot.
    mutating func flushOwed(factory: NotificationFactory, newPushID: () -> UUID) -> [PlannerAction] {
        guard var owed, !owed.isEmpty else {
            self.owed = nil
            return []
        }
        let now = factory.now
        throttle.prune(now: now, policy: policy)
        if throttle.hasSlot(now: now, policy: policy) {
            self.owed = nil
            let messages = owed.messages.filter { !$0.isExpired(at: now) }
            guard !messages.isEmpty || !owed.clearIDs.isEmpty else { return [] }
            return sendBackground(
                messages: messages, reason: messages.isEmpty ? .clear : owed.wakeReason, clearIDs: owed.clearIDs,
                badge: owed.badge, factory: factory, newPushID: newPushID
            )
        }
        guard let delay = policy.throttledAlertDelay, let since = owed.wakeOwedSince,
            now >= since.addingTimeInterval(delay)
        else { return [] }
        let messages = owed.messages
        owed.forget(Set(messages.map(\.id)))
        self.owed = owed.isEmpty ? nil : owed
        return sendAlert(
            for: messages, reason: .throttledAlert, badge: unreadCount, contentAvailable: true, withSound: true,
            factory: factory, newPushID: newPushID
        )
    }

    /// A background push; if it wakes for messages, the reconnect window starts (rule 4). A
    /// clear-only push starts no window: the app may clear its notifications without connecting.
    private mutating func sendBackground(
        messages: [PlannedMessage], reason: PushReason, clearIDs: [String], badge: Int?,
        factory: NotificationFactory, newPushID: () -> UUID
    ) -> [PlannerAction] {
        let id = newPushID()
        let messageIDs = messages.map(\.id)
        let notification = factory.background(
            id: id, reason: reason, messageIDs: messageIDs, clearIDs: clearIDs, badge: badge, extras: messages.last?.extras
        )
        let action = plan(
            .background(notification), id: id, token: .remote, reason: reason, strategy: factory.strategy,
            messageIDs: messageIDs + clearIDs.filter { !messageIDs.contains($0) }, now: factory.now
        )
        if !messages.isEmpty {
            watch = WakeWatch(
                pushID: id, reason: reason, strategy: factory.strategy,
                deadline: factory.now.addingTimeInterval(policy.reconnectWindow), messages: messages
            )
        }
        return [action]
    }

    /// An alert for messages, unless they have all expired.
    mutating func sendAlert(
        for messages: [PlannedMessage], reason: PushReason, badge: Int?, contentAvailable: Bool, withSound: Bool,
        factory: NotificationFactory, newPushID: () -> UUID
    ) -> [PlannerAction] {
        let live = messages.filter { !$0.isExpired(at: factory.now) }.suffix(max(policy.maximumIDsPerPush, 1))
        guard !live.isEmpty else { return [] }
        let id = newPushID()
        guard
            let (notification, named) = factory.messageAlert(
                id: id, reason: reason, messages: Array(live), unseen: unseen, badge: badge,
                contentAvailable: contentAvailable, withSound: withSound
            )
        else { return [] }
        return [
            plan(
                .alert(notification), id: id, token: .remote, reason: reason, strategy: factory.strategy,
                messageIDs: named, now: factory.now
            )
        ]
    }

    /// Wraps a notification as a push: background pushes count against the throttle (rule 3), and
    /// a push to an absent device waits to be measured at its next connection (rule 10). Pushes
    /// to a connected device are not measured: there is no wake to measure.
    mutating func plan(
        _ notification: PlannedNotification, id: UUID, token: PushTokenKind, reason: PushReason,
        strategy: DeliveryStrategy, messageIDs: [String], now: Date, ringing: (callID: String, until: Date)? = nil
    ) -> PlannerAction {
        if case .background = notification { throttle.record(now) }
        // After any push for messages the device may show notifications: an alert's own, or the
        // local ones a woken app posts. Only clears show nothing.
        if reason != .clear, reason != .clearAll { mayShowNotifications = true }
        // A relayed push wakes nothing Beckon could see come back (a drop-in device never syncs).
        if !isConnected, reason != .relayed {
            measured.append(MeasuredPush(pushID: id, reason: reason, strategy: strategy, sentAt: now))
            if measured.count > policy.measuredPushLimit {
                measured.removeFirst(measured.count - max(policy.measuredPushLimit, 0))
            }
        }
        return .send(
            PlannedPush(
                id: id, token: token, reason: reason, strategy: strategy, messageIDs: messageIDs,
                notification: notification, plannedAt: now, ringing: ringing
            )
        )
    }
}
