import BeckonProtocol
import Foundation

/// Decides, for one device, which pushes to send and when: a pure value-type state machine in the
/// style of swift-nio's connection state machines (docs/design.md, "How the code is shaped"). Every event takes the time as
/// `now` and returns the actions to take; nothing here sleeps, reads a clock, or touches the
/// network. The driver persists the whole value (it is Codable) in the same transaction as the
/// pushes it planned (rule 9), and calls `deadlineReached` at `nextDeadline`.
///
/// Push ids come from `newPushID` on each event (random by default; tests pass a sequence).
public struct DevicePlanner: Hashable, Sendable, Codable {
    /// The app's settings. The driver may replace them between events. Not part of the saved
    /// state: it is the app's configuration, which the driver sets again after decoding (and
    /// leaving it out keeps the state saved at every change small).
    public var policy: DeliveryPolicy = DeliveryPolicy()
    /// Whether the device has a live sync session. While it does, messages travel over it and are
    /// never pushed.
    public internal(set) var isConnected: Bool = false
    /// Whether the device missed a wake and has not connected since (rule 4).
    public internal(set) var isUnreachable: Bool = false
    /// The user's unread count as last reported: the badge of alerts that cover several messages.
    public internal(set) var unreadCount: Int?

    var throttle = BackgroundThrottle()
    var watch: WakeWatch?
    var owed: OwedBackground?
    var repush: RepushSchedule?
    var calls: [RingingCall] = []
    var measured: [MeasuredPush] = []
    /// A push for messages went to the device since it last connected: it may be showing
    /// notifications that a clear-all should remove. The app clears its own when it connects
    /// (and syncs read state).
    var mayShowNotifications = false
    /// When the last clear-all push was planned (at most one per `policy.clearAllInterval`).
    var lastClearAllAt: Date?
    /// What the device has not seen since its last session: every message alert names it (rule 11).
    var unseen = UnseenMessages()

    private enum CodingKeys: String, CodingKey {
        case isConnected, isUnreachable, unreadCount, throttle, watch, owed, repush, calls, measured
        case mayShowNotifications, lastClearAllAt, unseen
    }

    public init(policy: DeliveryPolicy = DeliveryPolicy()) {
        self.policy = policy
    }

    /// Reads a saved state, including one saved by an earlier version: fields added since are
    /// optional here, so an upgrade keeps every device's throttle, ringing calls and re-pushes.
    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        isConnected = try c.decode(Bool.self, forKey: .isConnected)
        isUnreachable = try c.decode(Bool.self, forKey: .isUnreachable)
        unreadCount = try c.decodeIfPresent(Int.self, forKey: .unreadCount)
        throttle = try c.decode(BackgroundThrottle.self, forKey: .throttle)
        watch = try c.decodeIfPresent(WakeWatch.self, forKey: .watch)
        owed = try c.decodeIfPresent(OwedBackground.self, forKey: .owed)
        repush = try c.decodeIfPresent(RepushSchedule.self, forKey: .repush)
        calls = try c.decode([RingingCall].self, forKey: .calls)
        measured = try c.decode([MeasuredPush].self, forKey: .measured)
        mayShowNotifications = try c.decodeIfPresent(Bool.self, forKey: .mayShowNotifications) ?? false
        lastClearAllAt = try c.decodeIfPresent(Date.self, forKey: .lastClearAllAt)
        unseen = try c.decodeIfPresent(UnseenMessages.self, forKey: .unseen) ?? UnseenMessages()
    }

    /// When the driver must call `deadlineReached`: the end of a reconnect window, the next ring
    /// or call timeout, the next re-push, the next free throttle slot for an owed push, or the
    /// moment an owed wake turns into an alert. Nil when nothing is pending.
    public var nextDeadline: Date? {
        var dates: [Date] = []
        if let watch { dates.append(watch.deadline) }
        dates.append(contentsOf: calls.map(\.nextEvent))
        if let repush { dates.append(repush.nextAt) }
        if let owed, !owed.isEmpty {
            if let slot = throttle.nextSlot(policy: policy) { dates.append(slot) }
            if let delay = policy.throttledAlertDelay, let since = owed.wakeOwedSince {
                dates.append(since.addingTimeInterval(delay))
            }
        }
        return dates.min()
    }

    /// The strategy this planner uses for `device` under the current policy.
    public func effectiveStrategy(for device: PlannerDevice) -> DeliveryStrategy {
        policy.effectiveStrategy(for: device.capabilities)
    }

    // MARK: Connection events

    /// The device opened a sync session. Every push sent since it was last connected is measured
    /// (rule 10): connected within its reconnect window, or missed — a connection after the
    /// window is not credited to it. Pending wakes, owed pushes and re-pushes are over, since the
    /// session syncs messages and read state. Ringing calls keep ringing until `callEnded` or
    /// their timeout: the app may have connected because of the ring and still needs the user to
    /// answer.
    ///
    /// An `extension` session (the notification service extension syncing what a push named)
    /// proves the push arrived, but the extension shows notifications rather than clearing them:
    /// owed clears stay owed and a later clear-all is still due. So does an app session that a
    /// push within its window explains: an app woken in the background posts the notifications
    /// of what it synced.
    public mutating func connected(now: Date, role: SyncRole = .app) -> [PlannerAction] {
        var actions = measureMissed(now: now)
        let woken = !measured.isEmpty
        actions += measured.map {
            PlannerAction.wakeObserved(
                pushID: $0.pushID, reason: $0.reason, strategy: $0.strategy,
                latency: now.timeIntervalSince($0.sentAt)
            )
        }
        measured = []
        if isUnreachable {
            isUnreachable = false
            actions.append(.becameReachable)
        }
        isConnected = true
        watch = nil
        repush = nil
        // Either role syncs everything after the cursor, and shows what it syncs (rule 11).
        unseen = UnseenMessages()
        if role == .app {
            owed = nil
            if !woken { mayShowNotifications = false }
        } else if var stillOwed = owed {
            // Its messages sync now; its clears stay owed.
            stillOwed.forget(Set(stillOwed.messages.map(\.id)))
            owed = stillOwed.isEmpty ? nil : stillOwed
        }
        return actions
    }

    /// The sync session ended. Messages it left unacknowledged are pushed again with backoff
    /// until acknowledged or the device returns (rule 5). After a drop the first re-push waits (the
    /// device may be back in a moment); after a clean `bye` it goes at once: those messages
    /// crossed the `bye`, and the app, about to be suspended, has not stored them.
    public mutating func disconnected(now: Date, unackedMessageIDs: [String], clean: Bool) -> [PlannerAction] {
        isConnected = false
        unseen.add(unackedMessageIDs, limit: policy.maximumIDsPerPush)
        guard !unackedMessageIDs.isEmpty else {
            repush = nil
            return []
        }
        repush = RepushSchedule(
            messageIDs: Array(unackedMessageIDs.suffix(max(policy.maximumIDsPerPush, 1))),
            nextAt: clean ? now : now.addingTimeInterval(RepushSchedule.delay(afterSent: 0, policy: policy))
        )
        return []
    }

    /// Whether an acknowledgement can change anything: only a pending re-push listens for them.
    /// (The server reads which messages are left for `acknowledged` only when this is true.)
    public var waitsForAcknowledgements: Bool { repush != nil }

    /// Messages were acknowledged by another path (the extension fetching by id): only
    /// `remainingUnackedIDs` still need re-pushing; none left cancels re-pushing (rule 5).
    public mutating func acknowledged(remainingUnackedIDs: [String], now: Date) -> [PlannerAction] {
        guard var repush else { return [] }
        let remaining = Set(remainingUnackedIDs)
        unseen.forget(Set(repush.messageIDs.filter { !remaining.contains($0) }))
        repush.messageIDs.removeAll { !remaining.contains($0) }
        self.repush = repush.messageIDs.isEmpty ? nil : repush
        return []
    }

    /// The device showed these messages without a sync session: its notification service
    /// extension fetched them by id. They are not re-pushed and no escalation announces them
    /// (the user sees them); the cursor does not move, only sync acks move it.
    public mutating func shown(messageIDs: [String], now: Date) -> [PlannerAction] {
        forgetPending(Set(messageIDs))
        return []
    }

    /// Drops messages from pending wakes, escalations, owed pushes, re-pushes and the unseen: the user has
    /// them (read elsewhere, or shown by the extension), so announcing them again would be wrong.
    mutating func forgetPending(_ ids: Set<String>) {
        watch?.messages.removeAll { ids.contains($0.id) }
        owed?.forget(ids)
        unseen.forget(ids)
        if var repush {
            repush.messageIDs.removeAll { ids.contains($0) }
            self.repush = repush.messageIDs.isEmpty ? nil : repush
        }
    }

    /// Pushes whose reconnect window ended without a connection are missed (rule 10): they
    /// leave `measured`, so no later connection is credited to them.
    mutating func measureMissed(now: Date) -> [PlannerAction] {
        let expired = measured.filter { now > $0.sentAt.addingTimeInterval(policy.reconnectWindow) }
        guard !expired.isEmpty else { return [] }
        measured.removeAll { now > $0.sentAt.addingTimeInterval(policy.reconnectWindow) }
        return expired.map { .wakeMissed(pushID: $0.pushID, reason: $0.reason, strategy: $0.strategy) }
    }

    /// APNs finally refused a push (after the outbox's retries: a dead token, a payload error).
    /// It proves nothing about the app, so it is neither measured (rule 10) nor, if it was a wake,
    /// allowed to mark the device unreachable (rule 4): its reconnect window is dropped. Its
    /// messages reach the device at its next connection.
    public mutating func pushFailed(pushID: UUID, now: Date) -> [PlannerAction] {
        measured.removeAll { $0.pushID == pushID }
        if watch?.pushID == pushID { watch = nil }
        return []
    }
}
