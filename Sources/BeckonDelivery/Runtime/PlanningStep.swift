import APNSCore
import BeckonJSON
import BeckonProtocol
import BeckonStore
import Foundation

/// One transaction's worth of planning: the devices and planner states a batch of events
/// touches, read up front; each event applied in order; then the states, pushes and wake
/// outcomes decided (`decided()`), which the driver saves together. It reads and never writes.
struct PlanningStep: Sendable {
    let context: PlanningContext
    var now: Date { context.now }
    private var devices: [DeviceRef: Device] = [:]
    private var devicesOfUser: [UserRef: [DeviceRef]] = [:]
    private var planners: [DeviceRef: DevicePlanner] = [:]
    /// The stored version each planner was read at (0: never saved).
    private var versions: [DeviceRef: Int64] = [:]
    private var afterSave: [(DeviceRef, @Sendable () -> Void)] = []
    private var changed: Set<DeviceRef> = []
    private var unread: [UserRef: Int] = [:]
    private var batch = DeliveryBatch()

    /// - Parameters:
    ///   - only: plan these devices alone (another node saved them first last time).
    ///   - previous: a batch still saving; if it read one of this batch's devices, its save is
    ///     waited for before any state is loaded.
    init(
        context: PlanningContext, devicesFor events: [DeliveryEvent], only: Set<DeviceRef>? = nil,
        after previous: DeliveryDriver.SavingBatch? = nil
    ) async throws {
        self.context = context
        var users: Set<UserRef> = []
        var single: Set<DeviceRef> = []
        for event in events {
            switch event {
            case .messageAppended(_, let recipients, _), .callEnded(_, _, let recipients, _): users.formUnion(recipients)
            case .read(let user, _, _, _): users.insert(user)
            case .connected(let device, _, _), .disconnected(let device, _, _, _), .acknowledged(let device, _),
                .pushFailed(let device, _, _), .deadline(let device), .shown(let device, _, _):
                single.insert(device)
            }
        }
        for (user, found) in try await context.store.devices(of: Array(users)) {
            devicesOfUser[user] = found.map(\.ref)
            for device in found { devices[device.ref] = device }
        }
        let missing = single.filter { devices[$0] == nil }
        for (ref, device) in try await context.store.devices(Array(missing)) { devices[ref] = device }
        if let only {
            // A device left out has no planner here: its transitions are skipped.
            devices = devices.filter { only.contains($0.key) }
            devicesOfUser = devicesOfUser.mapValues { $0.filter(only.contains) }
        }
        // Unread counts only for users with devices to push to.
        let pushed = users.filter { !(devicesOfUser[$0] ?? []).isEmpty }
        unread = try await context.store.unreadCounts(of: Array(pushed))
        if let previous, !previous.devices.isDisjoint(with: devices.keys) { await previous.task.value }
        try await loadStates()
    }

    /// Every device the batch read.
    var touched: Set<DeviceRef> { Set(devices.keys) }

    /// Reads the saved planners. A planner that believes its device connected although no node
    /// may hold a session of it (`DevicePresence.mayBeConnected`) was saved before a restart: it
    /// is told of the drop first, so it does not stay silent for a device that is gone. (A session
    /// that ended since the start needs no such help: its `.disconnected` event is on its way,
    /// with the unacknowledged messages that a guess here would not know.) One that believes its
    /// device away although a node has claimed a session of it (`DevicePresence.liveSessions`)
    /// is told of that connection first.
    private mutating func loadStates() async throws {
        // A cached planner is used only for the registration it was planned for: a device deleted
        // and registered again, or moved to another user, starts afresh.
        let cached = context.cache.withLockedValue { cache in
            devices.compactMap { ref, device in
                cache[ref].flatMap { $0.matches(device) ? (ref, $0) : nil }
            }
        }
        var known = Dictionary(uniqueKeysWithValues: cached.map { ($0, $1.planner) })
        versions = Dictionary(uniqueKeysWithValues: cached.map { ($0, $1.version) })
        let saved = try await context.store.deliveryStates(devices.keys.filter { known[$0] == nil })
        let decoder = JSONValueDecoder()
        for (ref, state) in saved {
            versions[ref] = state.version
            do {
                known[ref] = try decoder.decode(DevicePlanner.self, from: state.planner)
            } catch {
                // A state this version cannot read starts over rather than stopping every batch.
                context.logger.error("a saved planner state is unreadable; starting afresh", metadata: [
                    "device": "\(ref)", "error": "\(error)",
                ])
            }
        }
        for ref in devices.keys {
            var planner = known[ref] ?? DevicePlanner(policy: context.policy(for: ref.appID))
            planner.policy = context.policy(for: ref.appID)  // The configuration may have changed.
            if planner.isConnected, await !context.presence.mayBeConnected(ref) {
                _ = planner.disconnected(now: now, unackedMessageIDs: [], clean: false)
                changed.insert(ref)
            }
            planners[ref] = planner
        }
        // And the other way: a planner saved as disconnected whose device a node holds a session
        // of is told of that connection now. Its own `connected` may be queued behind a backlog
        // on that node, and meanwhile nothing is to be pushed to a live device, nor its reconnect
        // window end (docs/cluster.md, "a connection counts before its planner hears of it").
        let away = devices.keys.filter { planners[$0]?.isConnected == false }
        if !away.isEmpty {
            let now = self.now
            for (ref, session) in await context.presence.liveSessions(away) {
                transition(ref) { planner, _ in planner.connected(now: min(session.since, now), role: session.role) }
            }
        }
    }

    // MARK: Events

    mutating func apply(_ event: DeliveryEvent) async throws {
        let now = self.now
        switch event {
        case .messageAppended(let message, let users, let extras):
            for user in users {
                let unreadCount = try await unreadCount(of: user)
                let planned = PlannedMessage(message, unreadCount: unreadCount, extras: extras)
                for ref in devicesOfUser[user] ?? [] {
                    transition(ref) { planner, device in
                        planner.messageArrived(planned, device: PlannerDevice(device), now: now)
                    }
                }
            }
        case .connected(let ref, let role, let at):
            // Measured from when the device connected, not from when the batch is planned.
            transition(ref) { planner, _ in planner.connected(now: min(at, now), role: role) }
            // Saved even when the planner already believed it connected (this node's cache, or a
            // state read before another node saved a drop): the save names that version, so a
            // drop saved meanwhile is refused or planned again (docs/cluster.md, "A connection is
            // always saved").
            if planners[ref] != nil { changed.insert(ref) }
        case .disconnected(let ref, let clean, _, let session):
            // A session replaced by a newer one (on another node, its `connected` maybe planned
            // already) ended no connection.
            if let session, await context.presence.connectedElsewhere(ref, besides: session) { return }
            // After a clean `bye` too: a message that arrived while the session was closing was
            // neither pushed (the device was connected) nor stored.
            let unacked = try await unackedMessageIDs(of: ref)
            transition(ref) { planner, _ in
                planner.disconnected(now: now, unackedMessageIDs: unacked, clean: clean)
            }
        case .acknowledged(let ref, _):
            // Live sessions ack every frame: most acks find nothing waiting, and cost no read.
            guard planners[ref]?.waitsForAcknowledgements == true else { return }
            let remaining = try await unackedMessageIDs(of: ref)
            transition(ref) { planner, _ in planner.acknowledged(remainingUnackedIDs: remaining, now: now) }
        case .read(let user, let reader, let ids, _):
            unread[user] = nil  // Reads change it.
            let unreadCount = try await unreadCount(of: user)
            for ref in devicesOfUser[user] ?? [] where ref != reader {
                transition(ref) { planner, device in
                    planner.readElsewhere(messageIDs: ids, unreadCount: unreadCount, device: PlannerDevice(device), now: now)
                }
            }
        case .callEnded(let callID, let outcome, let users, _):
            for ref in users.flatMap({ devicesOfUser[$0] ?? [] }) {
                transition(ref) { planner, device in
                    planner.callEnded(callID: callID, outcome: CallOutcome(outcome), device: PlannerDevice(device), now: now)
                }
            }
        case .shown(let ref, let ids, _):
            transition(ref) { planner, _ in planner.shown(messageIDs: ids, now: now) }
        case .pushFailed(let ref, let pushID, _):
            transition(ref) { planner, _ in planner.pushFailed(pushID: pushID, now: now) }
        case .deadline(let ref):
            transition(ref) { planner, device in
                planner.deadlineReached(device: PlannerDevice(device), now: now)
            }
            // Saved even when nothing changed, so its stored deadline is rewritten (it may have
            // been computed under another policy) instead of coming due again every tick.
            if planners[ref] != nil { changed.insert(ref) }
        }
    }

    /// Runs one planner transition for a device that still exists and records its actions.
    private mutating func transition(
        _ ref: DeviceRef, _ body: (inout DevicePlanner, Device) -> [PlannerAction]
    ) {
        guard let device = devices[ref], let before = planners[ref] else { return }
        var planner = before
        let actions = body(&planner, device)
        // Saved only when the transition changed something. A message to a device with a live
        // session still changes the unread count its planner keeps (the badge of a re-push after
        // a disconnect); leaving it unsaved measured as no gain (docs/benchmarks-history.md, "The live
        // path without a read").
        if planner != before {
            planners[ref] = planner
            changed.insert(ref)
        }
        record(actions, for: ref)
    }

    private mutating func record(_ actions: [PlannerAction], for ref: DeviceRef) {
        let metrics = context.metrics
        for action in actions {
            switch action {
            case .send(let push):
                // Rendered now, with Apple's limits checked once: the outbox keeps the request
                // itself, and the dispatcher sends it as it is.
                let rendered: APNSRenderedNotification
                do {
                    rendered = try push.rendered(bundleID: context.bundleID(for: ref.appID))
                } catch {
                    context.logger.error("a planned push does not fit APNs' rules; not sent", metadata: [
                        "device": "\(ref)", "reason": "\(push.reason.rawValue)", "error": "\(error)",
                    ])
                    continue
                }
                batch.pushes.append(OutboxPush(
                    device: ref, tokenKind: push.token, reason: push.reason, strategy: push.strategy,
                    notification: rendered, messageCount: push.messageIDs.count, messageIDs: push.messageIDs, ringingCallID: push.ringing?.callID,
                    ringingUntil: push.ringing?.until, createdAt: now, id: push.id))
                afterSave.append((ref, { metrics.decided(push) }))
            case .wakeObserved(let pushID, let reason, let strategy, let latency):
                batch.wakes.append(WakeOutcome(device: ref, pushID: pushID.uuidString.lowercased(), latency: latency, at: now))
                afterSave.append((ref, { metrics.wake(observed: latency, reason: reason, strategy: strategy) }))
            case .wakeMissed(let pushID, let reason, let strategy):
                batch.wakes.append(WakeOutcome(device: ref, pushID: pushID.uuidString.lowercased(), latency: nil, at: now))
                afterSave.append((ref, { metrics.wake(observed: nil, reason: reason, strategy: strategy) }))
            case .becameUnreachable:
                let logger = context.logger
                afterSave.append((ref, {
                    metrics.escalated()
                    logger.info("device unreachable after a missed wake; alerting until it connects", metadata: [
                        "device": "\(ref)"
                    ])
                }))
            case .becameReachable:
                break
            }
        }
    }

    // MARK: Deciding

    /// What the batch decided, for the driver to save.
    func decided() throws -> PlannedBatch {
        var batch = self.batch
        // Not Foundation's JSONEncoder: a state is saved at every change, and that encoder was 9%
        // of a node's time in a burst; the streaming one writes the same JSON about 4× faster.
        let encoder = JSONStreamEncoder()
        var remembered: [DeviceRef: CachedPlanner] = [:]
        for ref in changed {
            guard let planner = planners[ref] else { continue }
            let version = versions[ref] ?? 0
            batch.states.append(DeliveryState(
                device: ref, planner: Data(try encoder.encode(planner)), nextDeadline: planner.nextDeadline,
                unreachable: planner.isUnreachable, connected: planner.isConnected, version: version))
            if let device = devices[ref] { remembered[ref] = CachedPlanner(planner: planner, version: version + 1, for: device) }
        }
        return PlannedBatch(batch: batch, devices: devices, afterSave: afterSave, planners: remembered)
    }

    // MARK: Reads

    private mutating func unreadCount(of user: UserRef) async throws -> Int {
        if let count = unread[user] { return count }
        let count = try await context.store.unreadCount(of: user)
        unread[user] = count
        return count
    }

    /// The messages after the device's cursor, newest last: what a re-push is for (rule 5).
    private func unackedMessageIDs(of ref: DeviceRef) async throws -> [String] {
        guard let device = devices[ref] else { return [] }
        let cursor = try await context.store.cursor(device: ref)
        let limit = context.policy(for: ref.appID).maximumIDsPerPush
        return try await context.store.messages(for: device.user, after: cursor, limit: limit).map(\.message.id)
    }
}
