import BeckonJSON
import BeckonProtocol
import Foundation

/// The main app's side of the SDK: every entry point goes in through `handle(_:)`, in the order
/// iOS called them, and comes out as the right action, once (seed 001): a foreground session
/// while the app is in front, a bounded background sync for a push, a tap opened when the UI is
/// ready, notifications posted and removed by message id, calls reported.
///
/// The app holds the lease while it syncs; asking for it preempts an extension that holds it
/// (docs/design.md, "Sync roles"). It lets go before it may be suspended.
public actor BeckonApp {
    public struct Configuration: Sendable {
        public var endpoint: SyncEndpoint
        public var window: Int?
        public var backoff: ReconnectBackoff
        /// When the background completion handler is called at the latest: well inside iOS's
        /// 30 s (apns.md E.3; Monal and Linphone stop at 25 s).
        public var backgroundDeadline: Duration
        /// How long to wait for the lease (the extension yields within a second).
        public var leaseTimeout: Duration
        public var showsNotificationsWhileForeground: Bool
        /// The device's content key, to open sealed call hints.
        public var sealKey: Data?
        public var leaseTiming: LeaseLock.Timing
        /// How long a session stays open for a call that rings after a VoIP push, at most: the
        /// call's end arrives over it (rule 6). The server gives up ringing after 45 s.
        public var ringingSessionLimit: Duration

        public init(
            endpoint: SyncEndpoint, window: Int? = nil, backoff: ReconnectBackoff = ReconnectBackoff(),
            backgroundDeadline: Duration = .seconds(25), leaseTimeout: Duration = .seconds(3),
            showsNotificationsWhileForeground: Bool = false, sealKey: Data? = nil,
            leaseTiming: LeaseLock.Timing = LeaseLock.Timing(), ringingSessionLimit: Duration = .seconds(60)
        ) {
            self.endpoint = endpoint
            self.window = window
            self.backoff = backoff
            self.backgroundDeadline = backgroundDeadline
            self.leaseTimeout = leaseTimeout
            self.showsNotificationsWhileForeground = showsNotificationsWhileForeground
            self.sealKey = sealKey
            self.leaseTiming = leaseTiming
            self.ringingSessionLimit = ringingSessionLimit
        }
    }

    /// The platform, through the ports (docs/design.md, "A portable core behind small ports").
    public struct Ports: Sendable {
        public var notificationCenter: any NotificationCenterPort
        public var callReporter: any CallReporterPort
        public var backgroundTime: (any BackgroundTimePort)?
        public var clock: any ClientClock
        public var transport: any SyncTransport
        public var processSignal: (any ProcessSignalPort)?

        public init(
            notificationCenter: any NotificationCenterPort, callReporter: any CallReporterPort,
            backgroundTime: (any BackgroundTimePort)?, clock: any ClientClock, transport: any SyncTransport,
            processSignal: (any ProcessSignalPort)?
        ) {
            self.notificationCenter = notificationCenter
            self.callReporter = callReporter
            self.backgroundTime = backgroundTime
            self.clock = clock
            self.transport = transport
            self.processSignal = processSignal
        }
    }

    /// One background sync, shared by the pushes that arrive while it runs.
    private struct BackgroundRun {
        var id: Int
        var completions: [BackgroundCompletion]
        var session: SyncSession?
    }

    public nonisolated let configuration: Configuration
    public nonisolated let store: ClientStore
    public nonisolated let lock: LeaseLock
    public nonisolated let presenter: NotificationPresenter
    public nonisolated let calls: CallCoordinator
    let ports: Ports

    private var router = EntryPointRouter()
    private var opener: (@Sendable (NotificationTap) -> Void)?
    private var foreground: (session: SyncSession, writer: LeaseGuard)?
    private var foregroundStarting: Task<Void, Never>?
    private var background: BackgroundRun?
    private var nextRunID = 0
    private var jitter: JitterSource
    private let inbox: AsyncStream<Input>
    private let inboxContinuation: AsyncStream<Input>.Continuation
    private var runner: Task<Void, Never>?

    private enum Input: Sendable {
        case event(AppEvent)
        /// A VoIP push was reported as a ringing call.
        case ringing(callID: String)
        case barrier(CheckedContinuation<Void, Never>)
    }

    public init(
        configuration: Configuration, store: ClientStore, ports: Ports, renderer: MessageRenderer? = nil,
        jitter: JitterSource = JitterSource()
    ) {
        self.configuration = configuration
        self.store = store
        self.ports = ports
        self.jitter = jitter
        self.lock = LeaseLock(
            store: store, holder: LeaseHolder(role: .app), clock: ports.clock, signal: ports.processSignal,
            timing: configuration.leaseTiming)
        self.presenter = NotificationPresenter(
            store: store, center: ports.notificationCenter, role: .app, clock: ports.clock, renderer: renderer,
            showsWhileForeground: configuration.showsNotificationsWhileForeground)
        self.calls = CallCoordinator(store: store, reporter: ports.callReporter, sealKey: configuration.sealKey)
        (inbox, inboxContinuation) = AsyncStream.makeStream(of: Input.self)
    }

    /// Reports an entry point. Synchronous, so UIKit's callbacks forward in their own order.
    public nonisolated func handle(_ event: AppEvent) {
        inboxContinuation.yield(.event(event))
        Task { await self.startIfNeeded() }
    }

    /// Returns once every event reported before has been handled (not the background work it
    /// started).
    public func settled() async {
        startIfNeeded()
        await withCheckedContinuation { inboxContinuation.yield(.barrier($0)) }
    }

    /// PushKit's handler (synchronous; apns.md E.6). See `CallCoordinator.receiveVoIPPush`.
    /// A call that rings keeps a session open until it stops ringing, so that its end on
    /// another device reaches this one (rule 6: the server sends no push for it).
    @discardableResult
    public nonisolated func receiveVoIPPush(_ payload: JSONValue, handler: (VoIPPush) -> CallReport) -> CallReport {
        let report = calls.receiveVoIPPush(payload, handler: handler)
        if report.kind == .incoming {
            inboxContinuation.yield(.ringing(callID: report.call.callID))
            Task { await self.startIfNeeded() }
        }
        return report
    }

    /// `userNotificationCenter(_:willPresent:)`: whether to show an alert that arrives while the
    /// app is in front. Not when the app shows it itself, nor when it is read already.
    public func willPresent(identifier: String, userInfo: JSONValue) async -> Bool {
        let ids = BeckonPushPayload(payload: userInfo)?.ids ?? [identifier]
        return await presenter.shouldPresent(identifier: identifier, messageIDs: ids, as: foreground?.writer)
    }

    /// The user read these messages in the app: stored, their notifications removed, the badge
    /// lowered, and the server told (now, or at the next session).
    public func markRead(_ ids: [String]) async throws {
        try await withWriter { writer in
            let newlyRead = try self.store.markRead(ids, locally: true, as: writer)
            let counted = try newlyRead.compactMap { try self.store.message(id: $0) }.filter { $0.kind.countsAsUnread }.count
            let badge = max(0, try self.store.badge() - counted)
            try self.store.setBadge(badge, as: writer)
            await self.presenter.clear(messageIDs: ids, as: writer)
            await self.presenter.setBadge(badge)
        }
        foreground?.session.sendReadMarkers(ids)
    }

    /// The session that runs while the app is in front, if any.
    public var foregroundSession: SyncSession? { foreground?.session }

    /// The router's state (for tests and diagnostics).
    public var routerState: EntryPointRouter { router }

    // MARK: The loop

    private func startIfNeeded() {
        guard runner == nil else { return }
        runner = Task { await self.run() }
    }

    private func run() async {
        for await input in inbox {
            switch input {
            case .barrier(let continuation): continuation.resume()
            case .event(let event): await process(event)
            case .ringing(let callID): startRingingSync(callID)
            }
        }
    }

    private func process(_ event: AppEvent) async {
        // Every entry point but the last may write: the store takes locks again.
        if case .didEnterBackground = event {} else { store.resume() }
        switch event {
        case .didFinishLaunching(let notification):
            await perform(router.handle(.didFinishLaunching(withNotification: notification != nil)), completion: nil)
        case .willEnterForeground:
            await perform(router.handle(.willEnterForeground), completion: nil)
        case .didBecomeActive:
            await perform(router.handle(.didBecomeActive), completion: nil)
        case .willResignActive:
            await perform(router.handle(.willResignActive), completion: nil)
        case .didEnterBackground:
            await perform(router.handle(.didEnterBackground), completion: nil)
        case .didReceiveRemoteNotification(let payload, let state, let completion):
            let notification = RemoteNotification(payload: payload)
            await perform(router.handle(.remoteNotification(notification, state: state)), completion: completion)
            // Every path calls it once; this is the net under them (a second call does nothing).
            if !(background?.completions.contains { $0 === completion } ?? false) { completion(.noData) }
        case .didTapNotification(let identifier, let userInfo):
            await perform(router.handle(.notificationTapped(NotificationTap(identifier: identifier, payload: userInfo))), completion: nil)
        case .ready(let open):
            opener = open
            await perform(router.handle(.appReady), completion: nil)
        case .networkAvailable:
            await perform(router.handle(.networkAvailable), completion: nil)
        }
    }

    private func perform(_ actions: [EntryPointRouter.Action], completion: BackgroundCompletion?) async {
        for action in actions {
            switch action {
            case .startForegroundSync:
                await presenter.setForeground(true)
                startForeground()
            case .stopForegroundSync:
                await presenter.setForeground(false)
                stopForeground()
            case .backgroundSync:
                if let completion { startBackgroundSync(completion) }
            case .applyPush(let notification):
                await apply(notification)
            case .clearAllNotifications:
                try? await withWriter { writer in await self.presenter.clearAll(as: writer) }
            case .complete(let result):
                completion?(result)
            case .open(let tap):
                opener?(tap)
            case .reconcileNotifications:
                try? await withWriter { writer in await self.presenter.reconcile(as: writer) }
            case .reconnectNow:
                foreground?.session.reconnectNow()
            }
        }
    }

    /// Runs `body` with the lease: the foreground session's, or a short one of its own.
    private func withWriter(_ body: @Sendable (LeaseGuard) async throws -> Void) async throws {
        if let writer = foreground?.writer, writer.isHeld {
            try await body(writer)
        } else {
            try await lock.withLease(timeout: configuration.leaseTimeout, body)
        }
    }

    /// What a push says, acted on before any sync: notifications of messages read elsewhere go
    /// (rule 7), and the badge follows.
    private func apply(_ notification: RemoteNotification) async {
        guard let beckon = notification.beckon, !beckon.clear.isEmpty || beckon.badge != nil else { return }
        try? await withWriter { writer in
            if !beckon.clear.isEmpty {
                _ = try? self.store.markRead(beckon.clear, locally: false, as: writer)
                await self.presenter.clear(messageIDs: beckon.clear, as: writer)
            }
            if let badge = beckon.badge {
                try? self.store.setBadge(badge, as: writer)
                await self.presenter.setBadge(badge)
            }
        }
    }

    // MARK: Foreground

    private func startForeground() {
        guard foreground == nil, foregroundStarting == nil else { return }
        foregroundStarting = Task { await self.openForegroundSession() }
    }

    private func openForegroundSession() async {
        defer { foregroundStarting = nil }
        var attempt = 0
        while router.isActive && foreground == nil {
            do {
                let writer = try await lock.acquire(timeout: configuration.leaseTimeout)
                guard router.isActive else {
                    await writer.release()
                    return
                }
                let session = makeSession(writer: writer)
                foreground = (session, writer)
                await session.start()
                Task { await self.watchForeground(session) }
                return
            } catch {
                // The extension did not let go in time (or the store failed): try again.
                attempt += 1
                try? await ports.clock.sleep(for: configuration.backoff.delay(attempt: attempt, unit: jitter.next()))
            }
        }
    }

    /// A foreground session that stops on its own (revoked, a protocol error, the lease lost)
    /// gives the lease back; the next `didBecomeActive` starts another.
    private func watchForeground(_ session: SyncSession) async {
        let reason = await session.untilStopped()
        guard reason != .requested, let current = foreground, current.session === session else { return }
        foreground = nil
        await current.writer.release()
    }

    private func stopForeground() {
        foregroundStarting?.cancel()
        guard let (session, writer) = foreground else {
            suspendIfIdle()
            return
        }
        foreground = nil
        // `bye`, the last commits and the lease's release before iOS suspends the app: a
        // background task buys the time (docs/design.md, "A lease, not a held file lock").
        let backgroundTime = ports.backgroundTime
        let token = backgroundTime?.begin("beckon.stop", expired: { session.preempt() })
        Task {
            await session.stopAndWait()
            await writer.release()
            self.suspendIfIdle()
            if let token { backgroundTime?.end(token) }
        }
    }

    private func suspendIfIdle() {
        if !router.isActive && foreground == nil && background == nil { store.suspend() }
    }

    private func makeSession(writer: LeaseGuard) -> SyncSession {
        SyncSession(
            configuration: SyncSession.Configuration(
                endpoint: configuration.endpoint, role: .app, window: configuration.window, backoff: configuration.backoff),
            store: store, writer: writer, transport: ports.transport, clock: ports.clock, presenter: presenter,
            calls: calls, jitter: JitterSource(seed: UInt64(bitPattern: Int64(nextRunID)) &+ 0x5EED))
    }

    // MARK: Ringing

    private func startRingingSync(_ callID: String) {
        // In front, the foreground session hears the end.
        guard !router.isActive else { return }
        Task { await self.runRingingSync(callID) }
    }

    /// Holds a session while `callID` rings here, up to `ringingSessionLimit`, or until the app
    /// comes to the front (its own session takes over).
    private func runRingingSync(_ callID: String) async {
        guard let writer = try? await lock.acquire(timeout: configuration.leaseTimeout) else { return }
        guard !router.isActive else {
            await writer.release()
            return
        }
        let session = makeSession(writer: writer)
        await session.start()
        let clock = ports.clock
        let until = clock.now().addingTimeInterval(configuration.ringingSessionLimit.timeInterval)
        while calls.ringingCalls.contains(where: { $0.callID == callID }), clock.now() < until, !router.isActive {
            do { try await clock.sleep(for: .seconds(1)) } catch { break }
        }
        await session.stopAndWait()
        await writer.release()
        suspendIfIdle()
    }

    // MARK: Background

    private func startBackgroundSync(_ completion: BackgroundCompletion) {
        if background != nil {
            background?.completions.append(completion)
            return
        }
        nextRunID += 1
        let id = nextRunID
        background = BackgroundRun(id: id, completions: [completion], session: nil)
        let clock = ports.clock
        let deadline = configuration.backgroundDeadline
        Task {
            do { try await clock.sleep(for: deadline) } catch { return }
            await self.backgroundDeadlineReached(id)
        }
        Task { await self.runBackgroundSync(id) }
    }

    private func runBackgroundSync(_ id: Int) async {
        // Still in front (inactive, seed 001's app-switcher case): the live session carries the
        // message. A second session of the same role would replace it (4001).
        if let (session, _) = foreground {
            let before = await session.newMessageCount
            let caughtUp = await session.untilCaughtUp()
            let stored = await session.newMessageCount - before
            finishBackground(id, !caughtUp ? .failed : (stored > 0 ? .newData : .noData))
            return
        }
        let writer: LeaseGuard
        do {
            writer = try await lock.acquire(timeout: configuration.leaseTimeout)
        } catch {
            finishBackground(id, .failed)
            return
        }
        guard background?.id == id else {
            await writer.release()
            return
        }
        await presenter.reconcile(as: writer)
        let session = makeSession(writer: writer)
        background?.session = session
        await session.start()
        let caughtUp = await session.untilCaughtUp()
        let result: BackgroundFetchResult = !caughtUp ? .failed : (await session.newMessageCount > 0 ? .newData : .noData)
        finishBackground(id, result)
        await session.stopAndWait()
        await writer.release()
        suspendIfIdle()
    }

    /// The internal deadline: the completion handlers are called now, with what was stored so
    /// far, and the session is told to stop.
    private func backgroundDeadlineReached(_ id: Int) async {
        guard let run = background, run.id == id else { return }
        let stored = await run.session?.newMessageCount ?? 0
        finishBackground(id, stored > 0 ? .newData : .failed)
        run.session?.stop()
    }

    private func finishBackground(_ id: Int, _ result: BackgroundFetchResult) {
        guard let run = background, run.id == id else { return }
        background = nil
        for completion in run.completions { completion(result) }
    }
}
