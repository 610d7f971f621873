import BeckonStore
import Foundation
import Logging
import NIOConcurrencyHelpers
import ServiceLifecycle

/// Runs the delivery planner (BeckonDelivery.DevicePlanner) for every device: feeds it the
/// server's events, wakes it at its deadlines, and saves its state together with the pushes it
/// decided, in one transaction, before `PushDispatcher` sends them (design rule 9).
///
/// Events are taken in batches: the states of the devices a batch touches are read at once,
/// every event is applied in arrival order, and the whole batch is saved in one commit. The next
/// batch is read and planned while that commit is under way; it waits for it before loading a
/// device the two share, and saves after it (`plan(_:whileSaving:)`). One
/// driver per node; the state lives in the database, so another node (or this one after a
/// restart) continues where it stopped. With several nodes two drivers may plan one device at
/// once: each save names the state version it planned from, a device whose state moved meanwhile
/// is left out of the save (`BeckonStore.saveDelivery`), and the batch's events are planned again
/// for it from the new state, so one device's transitions still happen one at a time,
/// cluster-wide.
final class DeliveryDriver: Service, Sendable {
    /// Planning's reads (`PlanningContext.store`), the planners' due deadlines and saves, and
    /// the unread bookkeeping and trace records it prunes, and the receipts' figures it exports.
    typealias Store = DeviceDirectory & ReadStateStore & MailboxStore & DeliveryStateStore & MessageTraceStore & DeliveryReports

    let store: any Store
    let policies: [String: DeliveryPolicy]
    /// Each app's bundle id: the topic its pushes are rendered for.
    let bundleIDs: [String: String]
    let dispatcher: PushDispatcher
    let metrics: DeliveryMetrics
    let logger: Logger
    let now: @Sendable () -> Date
    /// How often due planners are looked for; deadlines are met to within it.
    let tick: Duration
    /// Most events planned in one transaction; a message to many users counts one per user, so a
    /// broadcast is planned in steps of about this many devices' users, each saved as it is done.
    let batchSize = 512
    /// Where the devices' sessions are: this node's hub, or every node's (several nodes).
    let presence: any DevicePresence
    /// How long a claimed deadline is this node's: if it dies before planning it, the deadline
    /// comes due again then, on any node.
    let deadlineLease: TimeInterval
    /// How long a message's trace records are kept (`trace.retention-hours`).
    let traceRetention: TimeInterval
    /// How many times a batch is planned (for the devices another node saved first) before its
    /// events for them are given up.
    let conflictAttempts = 20

    private let events: AsyncStream<DeliveryEvent>
    private let continuation: AsyncStream<DeliveryEvent>.Continuation
    private let backlog = NIOLockedValueBox(0)
    /// Devices whose deadline is queued and not planned yet, so a slow batch is not queued twice.
    private let queuedDeadlines = NIOLockedValueBox(Set<DeviceRef>())
    /// The planners as last saved, so a busy device's state is not read and decoded from the
    /// database for every batch. Only this driver writes them (one node per database today; with
    /// several nodes an entry may be stale: the save names its version and is refused then).
    /// Each entry remembers the registration it was planned for (see `CachedPlanner`).
    let planners = NIOLockedValueBox([DeviceRef: CachedPlanner]())
    /// Most planners kept in `planners`; beyond it the cache starts over.
    let plannerCacheLimit = 200_000

    init(
        store: any Store, policies: [String: DeliveryPolicy], bundleIDs: [String: String], dispatcher: PushDispatcher, metrics: DeliveryMetrics,
        tick: Duration = .seconds(1), logger: Logger, now: @escaping @Sendable () -> Date = { Date() },
        presence: any DevicePresence, deadlineLease: TimeInterval = 30,
        traceRetention: TimeInterval = DeliveryConfiguration().traceRetention
    ) {
        self.traceRetention = traceRetention
        self.store = store
        self.policies = policies
        self.bundleIDs = bundleIDs
        self.dispatcher = dispatcher
        self.metrics = metrics
        self.tick = tick
        self.logger = logger
        self.now = now
        self.presence = presence
        self.deadlineLease = deadlineLease
        (events, continuation) = AsyncStream.makeStream(of: DeliveryEvent.self)
    }

    /// Queues an event; never blocks the caller (an HTTP handler, a sync session).
    func submit(_ event: DeliveryEvent) {
        var events = [event]
        if case .messageAppended(let message, let users, let extras) = event, users.count > batchSize {
            events = stride(from: 0, to: users.count, by: batchSize).map { start in
                .messageAppended(message, users: Array(users[start..<min(start + batchSize, users.count)]), extras: extras)
            }
        }
        metrics.queued(backlog.withLockedValue { $0 += events.count; return $0 })
        for event in events { continuation.yield(event) }
    }

    func run() async throws {
        await withGracefulShutdownHandler {
            await withTaskGroup(of: Void.self) { group in
                group.addTask { await self.planEvents() }
                group.addTask { await self.wakeDuePlanners() }
                group.addTask { await self.keepHouse() }
                group.addTask { await self.dispatcher.run() }
                // Apple's final refusals go back to the planner: a failed push proves nothing
                // about the app.
                group.addTask {
                    for await failure in self.dispatcher.failures {
                        self.submit(.pushFailed(failure.device, pushID: failure.pushID, at: self.now()))
                    }
                }
                await group.next()
                group.cancelAll()
            }
        } onGracefulShutdown: {
            self.continuation.finish()
        }
    }

    // MARK: Loops

    private func planEvents() async {
        var iterator = events.makeAsyncIterator()
        var saving: SavingBatch?
        while let first = await iterator.next() {
            var batch = [first]
            var weight = first.weight
            // Take what is already queued, without waiting, up to a batch.
            while weight < batchSize, backlog.withLockedValue({ $0 }) > batch.count, let next = await iterator.next() {
                batch.append(next)
                weight += next.weight
            }
            metrics.queued(backlog.withLockedValue { $0 -= batch.count; return $0 })
            saving = await plan(batch, whileSaving: saving)
        }
        await saving?.task.value
    }

    /// Every `tick`, queues the deadlines that have come. They go through the same queue as
    /// every other event, so one device's planner is never in two transitions at once.
    private func wakeDuePlanners() async {
        while !Task.isCancelled {
            do {
                let now = now()
                let due = try await store.claimDueDeliveryStates(
                    before: now, limit: batchSize, leaseUntil: now.addingTimeInterval(deadlineLease))
                let fresh = queuedDeadlines.withLockedValue { queued in due.filter { queued.insert($0).inserted } }
                for device in fresh { submit(.deadline(device)) }
                try await Task.sleep(for: tick)
            } catch is CancellationError {
                return
            } catch {
                logger.error("reading due planners failed", metadata: ["error": "\(error)"])
                try? await Task.sleep(for: tick)
            }
        }
    }

    /// Once a minute, beside the deadlines (a week of records to prune must not hold them up):
    /// expired unread bookkeeping, trace records past their retention, and
    /// `beckon_messages_shown_within_minute_ratio`, each app's messages of the last hour that have
    /// had their minute.
    private func keepHouse() async {
        var shown: [String: ShownShareWindow] = [:]
        while !Task.isCancelled {
            do {
                try await Task.sleep(for: .seconds(60))
                try await store.pruneExpiredUnread(now: now())
                try await store.pruneTrace(before: now().addingTimeInterval(-traceRetention))
                let end = now().addingTimeInterval(-60)
                for app in policies.keys.sorted() {
                    var window = shown[app] ?? ShownShareWindow()
                    for interval in window.due(endingAt: end) {
                        window.add(
                            try await store.shownShares(appID: app, from: interval.start, to: interval.end, within: 60), for: interval)
                    }
                    shown[app] = window
                    for share in window.totals { metrics.shown(share, app: app) }
                }
            } catch is CancellationError {
                return
            } catch {
                logger.error("housekeeping failed", metadata: ["error": "\(error)"])
            }
        }
    }

    // MARK: Planning

    /// A planned batch whose save is under way.
    struct SavingBatch: Sendable {
        /// Every device the batch read: the next batch waits for this one before it loads any of
        /// their states.
        let devices: Set<DeviceRef>
        /// The save, and any planning again it needs; it ends when the batch is done.
        let task: Task<Void, Never>
    }

    /// One batch of events, planned while the batch before it saves: its reads (a third of a
    /// batch's time in a burst) need not wait for that commit. It waits for `previous` before
    /// loading the state of a device the two share, so a device's transitions stay one at a
    /// time and in order, and before its own save, so saves keep their order. A first pass that
    /// fails (a store unavailable) is planned again from the store once `previous` is done.
    func plan(_ batch: [DeliveryEvent], whileSaving previous: SavingBatch?) async -> SavingBatch? {
        var step: PlanningStep
        do {
            step = try await PlanningStep(context: context(), devicesFor: batch, after: previous)
            try await apply(batch, to: &step)
        } catch {
            await previous?.task.value
            await planUntilSaved(batch, planned: nil)
            return nil
        }
        await previous?.task.value
        let planned = step
        return SavingBatch(devices: planned.touched, task: Task { await self.planUntilSaved(batch, planned: planned) })
    }

    /// Saves `batch` (load, apply, save, hand the pushes to the dispatcher), starting with its
    /// `planned` step if there is one; planned again from the store while the store is
    /// unavailable, and for the devices another node saved first.
    private func planUntilSaved(_ batch: [DeliveryEvent], planned: PlanningStep?) async {
        defer {
            let planned = batch.compactMap { if case .deadline(let device) = $0 { device } else { nil } }
            if !planned.isEmpty { queuedDeadlines.withLockedValue { $0.subtract(planned) } }
        }
        var ready = planned
        // Devices another node saved first are planned again, alone, from the stored state.
        var only: Set<DeviceRef>?
        var attempt = 0
        var unavailable = 0
        while attempt < conflictAttempts {
            attempt += 1
            do {
                var step: PlanningStep
                if let planned = ready {
                    step = planned
                    ready = nil
                } else {
                    step = try await PlanningStep(context: context(), devicesFor: batch, only: only)
                    try await apply(batch, to: &step)
                }
                let conflicted = try await save(try step.decided())
                if conflicted.isEmpty { return }
                metrics.conflicted()
                planners.withLockedValue { cache in for device in conflicted { cache[device] = nil } }
                only = conflicted
                guard attempt < conflictAttempts else {
                    logger.error("planning kept losing to other nodes; these devices' events are dropped", metadata: [
                        "devices": "\(conflicted.count)", "events": "\(batch.count)",
                    ])
                    return
                }
                // A short random pause, so the nodes that collided do not collide again.
                try? await Task.sleep(for: .milliseconds(Int.random(in: 1...(5 * attempt))))
            } catch where StoreUnavailable.matches(error) && unavailable < Self.unavailableAttempts {
                // Locked, full, out of reach: nothing was saved, so the batch is planned again from
                // the store once it answers (a batch dropped here would never be pushed). Backoff 0.1 s
                // doubling to 5 s: about two minutes in all.
                unavailable += 1
                attempt -= 1
                logger.warning("the store is unavailable; planning the batch again", metadata: [
                    "error": "\(String(reflecting: error))", "events": "\(batch.count)", "attempt": "\(unavailable)",
                ])
                try? await Task.sleep(for: .milliseconds(min(5_000, 100 << min(unavailable - 1, 6))))
            } catch {
                // The messages are in the mailbox whatever happens here; the device syncs them
                // when it next connects. Only the push for them is lost, and said so.
                logger.error("planning failed", metadata: ["error": "\(String(reflecting: error))", "events": "\(batch.count)"])
                return
            }
        }
    }

    /// Applies each event in order. One event that cannot be applied (its device deleted
    /// meanwhile) costs that event, not the batch: losing a `.disconnected` would leave a planner
    /// believing its device connected, silent until it reconnects. A store that is unavailable
    /// for a moment costs nothing: it is thrown, and the whole batch is planned again.
    private func apply(_ batch: [DeliveryEvent], to step: inout PlanningStep) async throws {
        for event in batch {
            do {
                try await step.apply(event)
            } catch where StoreUnavailable.matches(error) {
                throw error
            } catch {
                logger.error("an event could not be planned", metadata: ["error": "\(error)"])
            }
        }
    }

    /// How often a batch is planned again while the store is unavailable.
    static let unavailableAttempts = 30

    private func context() -> PlanningContext {
        PlanningContext(
            now: now(), store: store, presence: presence, policies: policies, bundleIDs: bundleIDs, cache: planners,
            metrics: metrics, logger: logger)
    }

    /// Saves what a step decided, in one transaction, through the dispatcher (which queues the
    /// pushes it has room for at once); returns the devices another node saved first, whose
    /// decisions were left out (to be planned again).
    private func save(_ planned: PlannedBatch) async throws -> Set<DeviceRef> {
        let conflicted = try await dispatcher.save(planned.batch, devices: planned.devices) { batch in
            try await self.store.saveDelivery(batch)
        }
        for (ref, effect) in planned.afterSave where !conflicted.contains(ref) { effect() }
        let saved = planned.planners.filter { !conflicted.contains($0.key) }
        let limit = plannerCacheLimit
        planners.withLockedValue { cache in
            if cache.count + saved.count > limit { cache.removeAll(keepingCapacity: true) }
            cache.merge(saved) { $1 }
        }
        return conflicted
    }
}
