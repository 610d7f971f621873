import BeckonJSON
import BeckonProtocol
import BeckonSeal
import Foundation

/// The notification service extension's work for one push (`didReceive(_:withContentHandler:)`):
/// open sealed content, or fetch only the messages the push names, and rewrite the text; on
/// any failure, at the deadline, at iOS's expiry or when memory runs low, deliver the push's own
/// text instead. The content handler is called exactly once, and never with a blank
/// notification (docs/design.md, "Small, bounded extensions"; seed 003's `loc-key` fallback).
///
/// With a store and a lease it also records what it showed in the shared ledger and keeps the
/// messages it fetched, so the app never notifies them again; it waits for the lease only
/// briefly, since the app may hold it (then the app records the alert in `willPresent`).
public final class NotificationServiceHandler: Sendable {
    /// How the extension works within iOS's limits (24 MB, 30 s; apns.md E.9).
    public struct Configuration: Sendable {
        /// Memory and time the extension allows itself.
        public var budget: ExtensionBudget
        /// The device's content key (`content` strategy with sealing).
        public var sealKey: Data?
        /// The app has the filtering entitlement: a push for messages already read or already
        /// notified is suppressed (apns.md E.4).
        public var canSuppress: Bool
        /// How long to wait for the lease to record in the ledger.
        public var leaseWait: Duration
        /// The text when the push carries none (never blank).
        public var genericLocKey: String
        /// For the `filtering` strategy: sync (role `extension`) for at most this long before
        /// deciding, instead of fetching by id. Needs `sync` in the handler.
        public var syncDeadline: Duration
        /// The last line of a notification that stands for several messages, for those it cannot
        /// list (`%d` = how many); give your localized text (rule 11).
        public var moreFormat: String

        /// The defaults suit iOS's notification service extension.
        public init(
            budget: ExtensionBudget = ExtensionBudget(), sealKey: Data? = nil, canSuppress: Bool = false,
            leaseWait: Duration = .seconds(2), genericLocKey: String = NotificationPresenter.genericLocKey,
            syncDeadline: Duration = .seconds(15), moreFormat: String = "and %d more"
        ) {
            self.budget = budget
            self.sealKey = sealKey
            self.canSuppress = canSuppress
            self.leaseWait = leaseWait
            self.genericLocKey = genericLocKey
            self.syncDeadline = syncDeadline
            self.moreFormat = moreFormat
        }
    }

    /// The settings it was made with.
    public let configuration: Configuration
    let fetcher: any MessageFetcherPort
    let clock: any ClientClock
    let memory: any MemoryGaugePort
    let store: ClientStore?
    let lock: LeaseLock?
    let renderer: MessageRenderer?
    let sync: ExtensionSync?
    /// Pushes being worked on in this process, until their content is handed over.
    private let runsInFlight = Locked(0)
    /// Memory reserved by the fetches in flight (`ExtensionBudget.answerPeakBytes` each).
    private let reservedBytes = Locked(0)
    /// The sync in flight, shared by the pushes that arrive meanwhile.
    private let syncInFlight = Locked<Task<ExtensionSync.Outcome, Never>?>(nil)

    /// `sync`: for the `filtering` strategy, the extension syncs before it decides (and may
    /// then suppress what is read or already shown); otherwise it fetches what the push names.
    public init(
        configuration: Configuration = Configuration(), fetcher: any MessageFetcherPort, clock: any ClientClock,
        memory: any MemoryGaugePort = UnknownMemoryGauge(), store: ClientStore? = nil, lock: LeaseLock? = nil,
        renderer: MessageRenderer? = nil, sync: ExtensionSync? = nil
    ) {
        self.configuration = configuration
        self.fetcher = fetcher
        self.clock = clock
        self.memory = memory
        self.store = store
        self.lock = lock
        self.renderer = renderer
        self.sync = sync
    }

    /// Starts the work for one push; `deliver` is called exactly once. Keep the returned run
    /// to forward iOS's `serviceExtensionTimeWillExpire`.
    @discardableResult
    public func receive(
        _ notification: IncomingNotification, deliver: @escaping @Sendable (NotificationServiceOutcome) -> Void
    ) -> NotificationServiceRun {
        let fallback = Self.visible(NotificationContent(apsOf: notification.payload), genericLocKey: configuration.genericLocKey)
        // iOS may suspend the extension once its last content is handed over: from then until
        // the next push the store takes no lock (0xdead10cc, apns.md E.9); work still running is
        // interrupted rather than caught holding one.
        let store = self.store
        if runsInFlight.withLock({ runs in
            runs += 1
            return runs == 1
        }) { store?.resume() }
        let runsInFlight = self.runsInFlight
        let deliver: @Sendable (NotificationServiceOutcome) -> Void = { outcome in
            if runsInFlight.withLock({ runs in
                runs -= 1
                return runs == 0
            }) { store?.suspend() }
            deliver(outcome)
        }
        let run = NotificationServiceRun(fallback: fallback, deliver: deliver)
        let work = Task { [self] in
            let outcome = await self.work(notification, fallback: fallback, run: run)
            run.finish(outcome)
        }
        let deadline = configuration.budget.deadline
        let clock = self.clock
        let timer = Task {
            do { try await clock.sleep(for: deadline) } catch { return }
            run.finishWithBest(.deadline)
            work.cancel()
        }
        run.onFinish {
            timer.cancel()
            work.cancel()
        }
        return run
    }

    /// Receives and waits for the outcome (tests, the simulator).
    public func handle(_ notification: IncomingNotification) async -> NotificationServiceOutcome {
        await withCheckedContinuation { continuation in
            receive(notification) { continuation.resume(returning: $0) }
        }
    }

    private func work(
        _ notification: IncomingNotification, fallback: NotificationContent, run: NotificationServiceRun
    ) async -> NotificationServiceOutcome {
        guard let beckon = BeckonPushPayload(payload: notification.payload), let newest = beckon.ids.last else {
            return .fallback(fallback, .notBeckon)
        }
        if configuration.canSuppress, alreadyHandled(beckon.ids) { return .suppressed }

        // Filtering: sync first (the app preempts it if it comes up), then decide from the store.
        if let sync, let store {
            _ = await sharedSync(sync)
            if configuration.canSuppress, alreadyHandled(beckon.ids) { return .suppressed }
            func storedText(_ id: String) -> NotificationContent? {
                guard let stored = try? store.message(id: id) else { return nil }
                return renderer?(DisplayableMessage(id: stored.id, kind: stored.kind, payload: stored.payloadJSON))
            }
            if let text = storedText(newest), text.hasText {
                var texts = [newest: text]
                for id in beckon.ids where id != newest { texts[id] = storedText(id) }
                return await rewrite(notification, beckon, fallback, texts: texts, fetched: [], run: run)
            }
        }

        // Sealed content needs no fetch (rule 1: it came sealed for this device).
        var texts: [String: NotificationContent] = [:]
        if let sealed = beckon.sealed, let key = configuration.sealKey,
            let content = try? ContentSeal.open(sealed, key: key), beckon.ids.contains(content.messageID)
        {
            let opened = fallback.replacingText(with: NotificationContent(sealed: content))
            if opened.hasText { texts[newest] = opened }
        }

        // Fetch only what the push names and nothing shows yet, newest first, one at a time,
        // within the budget: each answer is rendered and reduced to the bytes to keep before the
        // next is loaded, so one parse at a time is ever in memory (ExtensionBudget.answerFootprint).
        let budget = configuration.budget
        var kept: [FetchedMessage] = []
        var failure: NotificationServiceOutcome.FallbackReason?
        let replacing = notification.identifier
        let wanted = beckon.ids.reversed().filter {
            $0 == newest ? texts[newest] == nil : !handledElsewhere($0, replacing: replacing)
        }
        for id in wanted.prefix(budget.maximumFetches) {
            if Task.isCancelled { return .fallback(fallback, .deadline) }
            // Runs overlap in one process (iOS reuses it): each reserves an answer's peak, so two
            // cannot both count on the same free memory.
            guard reserveAnswer(budget) else {
                        failure = failure ?? .lowMemory
                break
            }
            defer { reservedBytes.withLock { $0 -= budget.answerPeakBytes } }
            do {
                let message = try await fetcher.fetch(messageID: id, byteLimit: budget.messageBytes)
                texts[id] = self.text(for: message)
                kept.append(message.compacted())
            } catch .tooLarge {
                        failure = failure ?? (id == newest ? .tooLarge : nil)
            } catch {
                failure = failure ?? (id == newest ? .fetchFailed : nil)
            }
        }
        guard texts[newest] != nil || kept.contains(where: { $0.id == newest }) else {
            await record(notification, ids: beckon.ids, fetched: kept)
            return .fallback(fallback, failure ?? .fetchFailed)
        }
        guard texts[newest]?.hasText == true else {
            await record(notification, ids: beckon.ids, fetched: kept)
            return .fallback(fallback, .nothingToShow)
        }
        return await rewrite(notification, beckon, fallback, texts: texts, fetched: kept, run: run)
    }

    /// The notification for the newest message, standing also for every other the push names
    /// that nothing shows yet (rule 11): a summary of their text, with the count of those it
    /// could not read. Its `beckon.ids` become the messages it shows, so a tap, a read elsewhere
    /// and the ledger name exactly those.
    private func rewrite(
        _ notification: IncomingNotification, _ beckon: BeckonPushPayload, _ fallback: NotificationContent,
        texts: [String: NotificationContent], fetched: [FetchedMessage], run: NotificationServiceRun
    ) async -> NotificationServiceOutcome {
        guard let newest = beckon.ids.last, let newestText = texts[newest] else { return .fallback(fallback, .fetchFailed) }
        let others = beckon.ids.dropLast().filter { !handledElsewhere($0, replacing: notification.identifier) }
        let shown = others.filter { texts[$0]?.hasText == true }
        // Unseen messages the server could not name in the push.
        let unnamed = max(beckon.unseen ?? 0, beckon.ids.count) - beckon.ids.count
        let summary = NotificationContent.summary(
            newest: newestText, earlier: shown.compactMap { texts[$0] }, more: others.count - shown.count + unnamed,
            moreFormat: configuration.moreFormat)
        var rewritten = fallback.replacingText(with: summary)
        var standsFor = beckon
        standsFor.ids = shown + [newest]
        standsFor.unseen = nil
        rewritten.userInfo[BeckonPushPayload.key] = standsFor.json
        // iOS's expiry during the ledger write below delivers this, not the fallback.
        run.improve(rewritten)
        await record(notification, ids: standsFor.ids, fetched: fetched)
        return .rewritten(rewritten)
    }

    /// Read in the store, or shown by another notification already. `replacing`: the identifier
    /// of the notification being built, which replaces the one with the same identifier (an
    /// alert for every unseen message shares one collapse id, design rule 11): what that one
    /// showed is shown again in its place, not twice.
    private func handledElsewhere(_ id: String, replacing identifier: String? = nil) -> Bool {
        guard let store else { return false }
        if (try? store.message(id: id))??.isRead ?? false { return true }
        guard let entry = (try? store.ledgerEntry(messageID: id)) ?? nil else { return false }
        return entry.notificationID != identifier
    }

    /// Reserves an answer's peak if the memory left, less what other runs reserved, holds it and
    /// the reserve.
    private func reserveAnswer(_ budget: ExtensionBudget) -> Bool {
        let available = memory.availableBytes()
        return reservedBytes.withLock { reserved in
            if let available, available - reserved < budget.answerPeakBytes + budget.reserveBytes { return false }
            reserved += budget.answerPeakBytes
            return true
        }
    }

    /// The operator's text for a fetched message, else the app's renderer's.
    private func text(for message: FetchedMessage) -> NotificationContent? {
        if let hinted = message.hints.map(NotificationContent.init(hints:)), hinted.hasText { return hinted }
        return renderer?(DisplayableMessage(id: message.id, kind: message.kind, payload: message.payload, hints: message.hints))
    }

    /// Every id read in the store, or already notified.
    private func alreadyHandled(_ ids: [String]) -> Bool {
        guard store != nil, !ids.isEmpty else { return false }
        return ids.allSatisfy { handledElsewhere($0) }
    }

    /// iOS may call `didReceive` for several pushes at once in one extension process
    /// (docs/simulator.md, "Field practice the model uses"). They share one sync: sessions of
    /// their own would replace one another on the server (one session per device and role,
    /// 4001). A push whose message the shared sync missed falls back to the fetch by id.
    private func sharedSync(_ sync: ExtensionSync) async -> ExtensionSync.Outcome {
        let (leaseWait, deadline) = (configuration.leaseWait, configuration.syncDeadline)
        let task = syncInFlight.withLock { current in
            if let current { return current }
            let task = Task { await sync.run(leaseWait: leaseWait, deadline: deadline) }
            current = task
            return task
        }
        let outcome = await task.value
        syncInFlight.withLock { current in if current == task { current = nil } }
        return outcome
    }

    /// Keeps what was fetched and records the alert in the ledger, if the lease comes quickly.
    private func record(_ notification: IncomingNotification, ids: [String], fetched: [FetchedMessage]) async {
        guard let store, let lock else { return }
        _ = try? await lock.withLease(timeout: configuration.leaseWait) { writer in
            for message in fetched { try store.storeFetched(message, as: writer) }
            try store.recordShown(notification.identifier, for: ids, by: .extension, as: writer)
        }
    }

    /// Never blank: a push with no text gets the generic text.
    static func visible(_ content: NotificationContent, genericLocKey: String) -> NotificationContent {
        guard !content.hasText else { return content }
        var content = content
        content.locKey = genericLocKey
        return content
    }
}
