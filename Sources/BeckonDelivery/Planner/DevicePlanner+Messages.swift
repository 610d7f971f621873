import APNSCore
import BeckonProtocol
import Foundation

extension DevicePlanner {
    /// A message was added to the user's mailbox for this device.
    ///
    /// - Connected: nothing; the sync gateway streams it (docs/design.md, "Data flow").
    /// - Receipts and low urgency: nothing on their own; they sync next time (MessageUrgency,
    ///   MessageKind: receipts are never alerted).
    /// - High urgency: a priority-10 alert at once whatever the strategy: the user must know now.
    /// - Otherwise by strategy: `wake` sends a throttled, coalesced background push (rule 3), or an
    ///   alert that still carries `content-available` while the device is unreachable (rule 4);
    ///   the alert strategies send their alert.
    /// - Calls: see `callArrived` (rule 6).
    public mutating func messageArrived(
        _ message: PlannedMessage, device: PlannerDevice, now: Date, newPushID: () -> UUID = { UUID.timeOrdered() }
    ) -> [PlannerAction] {
        unreadCount = message.unreadCount
        if message.kind == .call { return callArrived(message, device: device, now: now, newPushID: newPushID) }
        guard !isConnected, message.kind != .receipt, message.urgency != .low else { return [] }
        guard device.hasRemoteToken, !message.isExpired(at: now) else { return [] }
        let factory = NotificationFactory(policy: policy, device: device, now: now)
        // A push its caller wrote whole (gorush) goes out once, as asked: no strategy, throttle,
        // escalation or re-push; the caller's priority within Apple's rules (rule 2).
        if let relay = message.extras?.relay {
            let id = newPushID()
            return [
                plan(
                    factory.relayed(id: id, message: message, relay: relay), id: id, token: .remote, reason: .relayed,
                    strategy: factory.strategy, messageIDs: [message.id], now: now)
            ]
        }
        unseen.add([message.id], limit: policy.maximumIDsPerPush)
        if message.urgency == .high {
            return sendAlert(
                for: [message], reason: .urgentAlert, badge: message.unreadCount,
                contentAvailable: factory.strategy == .wake, withSound: true, factory: factory, newPushID: newPushID
            )
        }
        switch factory.strategy {
        case .wake where isUnreachable:
            return sendAlert(
                for: [message], reason: .unreachableAlert, badge: message.unreadCount, contentAvailable: true,
                withSound: true, factory: factory, newPushID: newPushID
            )
        case .wake:
            return requestWake(for: [message], reason: .wake, factory: factory, newPushID: newPushID)
        case .serviceExtension, .filtering, .content:
            return sendAlert(
                for: [message], reason: .alert, badge: message.unreadCount, contentAvailable: false,
                withSound: true, factory: factory, newPushID: newPushID
            )
        }
    }

    /// The user read messages on another device (rule 7). A connected device hears it live over
    /// sync, so nothing is pushed; otherwise a background push carries the ids to remove and the
    /// badge. It counts against the background budget; when throttled, clears are coalesced (ids
    /// merged, newest badge) and ride the next background push, which may also be a wake. Read
    /// messages are also dropped from pending wakes, escalations and re-pushes: alerting a message
    /// the user has already read would be wrong.
    public mutating func readElsewhere(
        messageIDs: [String], unreadCount: Int, device: PlannerDevice, now: Date,
        newPushID: () -> UUID = { UUID.timeOrdered() }
    ) -> [PlannerAction] {
        self.unreadCount = unreadCount
        forgetPending(Set(messageIDs))
        guard !isConnected, device.hasRemoteToken, !messageIDs.isEmpty else { return [] }
        let factory = NotificationFactory(policy: policy, device: device, now: now)
        // Nothing unread: one `{"aps":{"badge":0}}` removes every notification, and reaches an app
        // the user killed, which a background clear never does (seed 000).
        if unreadCount == 0, mayShowNotifications,
            lastClearAllAt.map({ now >= $0.addingTimeInterval(policy.clearAllInterval) }) ?? true
        {
            owed?.forgetClears()
            lastClearAllAt = now
            mayShowNotifications = false
            let id = newPushID()
            return [
                plan(
                    .alert(factory.clearAll(id: id)), id: id, token: .remote, reason: .clearAll,
                    strategy: factory.strategy, messageIDs: messageIDs, now: now
                )
            ]
        }
        var owed = self.owed ?? OwedBackground()
        owed.owe(clear: messageIDs, badge: unreadCount, limit: policy.maximumIDsPerPush)
        self.owed = owed
        return flushOwed(factory: factory, newPushID: newPushID)
    }

    /// Time passed: reconnect windows end (rule 4), calls ring or time out (rule 6), re-pushes
    /// fall due (rule 5), throttle slots free for owed pushes (rule 3). Safe to call early or late.
    public mutating func deadlineReached(
        device: PlannerDevice, now: Date, newPushID: () -> UUID = { UUID.timeOrdered() }
    ) -> [PlannerAction] {
        let factory = NotificationFactory(policy: policy, device: device, now: now)
        var actions = wakeWindowEnded(factory: factory, newPushID: newPushID)
        actions += measureMissed(now: now)
        actions += ringCalls(factory: factory, newPushID: newPushID)
        actions += repushIfDue(factory: factory, newPushID: newPushID)
        actions += flushOwed(factory: factory, newPushID: newPushID)
        return actions
    }

    // MARK: Rule 4: wake, watch, escalate

    /// The device did not connect within the window after a wake: count the miss, mark the device
    /// unreachable, and tell the user with an alert about the messages the wake was for (which
    /// still carries `content-available`, in case the app can run after all).
    private mutating func wakeWindowEnded(factory: NotificationFactory, newPushID: () -> UUID) -> [PlannerAction] {
        guard let watch, factory.now >= watch.deadline else { return [] }
        self.watch = nil
        // Missed, not observed: a later connection is not credited to this push.
        measured.removeAll { $0.pushID == watch.pushID }
        var actions: [PlannerAction] = [
            .wakeMissed(pushID: watch.pushID, reason: watch.reason, strategy: watch.strategy)
        ]
        if !isUnreachable {
            isUnreachable = true
            actions.append(.becameUnreachable)
        }
        guard factory.device.hasRemoteToken else { return actions }
        actions += sendAlert(
            for: watch.messages, reason: .unreachableAlert, badge: unreadCount, contentAvailable: true,
            withSound: true, factory: factory, newPushID: newPushID
        )
        return actions
    }

    // MARK: Rule 5: re-push while unacked

    private mutating func repushIfDue(factory: NotificationFactory, newPushID: () -> UUID) -> [PlannerAction] {
        guard var repush, factory.now >= repush.nextAt, !isConnected else { return [] }
        guard factory.device.hasRemoteToken else {
            self.repush = nil
            return []
        }
        let first = repush.sent == 0
        repush.sent += 1
        if repush.sent >= policy.repushLimit {
            self.repush = nil
        } else {
            repush.nextAt = factory.now.addingTimeInterval(RepushSchedule.delay(afterSent: repush.sent, policy: policy))
            self.repush = repush
        }
        // The planner does not hold these messages' hints, so a re-push alert shows generic text.
        let messages = repush.messageIDs.map { PlannedMessage(id: $0, unreadCount: unreadCount ?? 0) }
        switch factory.strategy {
        case .wake where !isUnreachable:
            // A background push like any other: throttled and coalesced (rule 3).
            return requestWake(for: messages, reason: .repush, factory: factory, newPushID: newPushID)
        case .wake, .serviceExtension, .filtering, .content:
            // Same collapse id as before, so each re-push replaces the last; only the first sounds.
            return sendAlert(
                for: messages, reason: .repush, badge: unreadCount, contentAvailable: factory.strategy == .wake,
                withSound: first, factory: factory, newPushID: newPushID
            )
        }
    }
}
