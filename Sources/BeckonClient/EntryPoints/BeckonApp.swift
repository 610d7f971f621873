import BeckonJSON
import BeckonProtocol
import Foundation

/// The main app's side of the SDK: every entry point goes in through `handle(_:)`, in the order
/// iOS called them, and comes out as the right action, once (seed 001): a foreground session
/// while the app is in front, a bounded background sync for a push, a tap opened when the UI is
/// ready, notifications posted and removed by message id, calls reported.
///
/// The app holds the lease while it syncs; asking for it preempts an extension that holds it
/// (docs/design.md, "Sync roles"). It lets go before it may be suspended, and only then calls a
/// completion handler or ends its background task: iOS may suspend the app the moment it does
/// (apns.md E.9).
///
/// One process holds one app session at a time (a second one would replace the first with
/// 4001): being in front, a background push and a ringing call are reasons to hold it, and it
/// closes when the last reason goes.
public actor BeckonApp {
    /// How the app's sessions behave; the defaults follow iOS's limits (apns.md E.3, E.9).
    public struct Configuration: Sendable {
        /// The sync WebSocket (`BeckonSetup.syncEndpoint`).
        public var endpoint: SyncEndpoint
        /// Read at each session's start in place of `endpoint.credential`, when set: the
        /// keychain may be unreadable at launch (before the first unlock, apns.md E.9).
        public var credentials: (any CredentialSource)?
        /// How many messages the server may send before an acknowledgement; nil: the server's default.
        public var window: Int?
        /// The wait before each reconnect after a dropped connection, with jitter.
        public var backoff: ReconnectBackoff
        /// When the background completion handler is called at the latest: well inside iOS's
        /// 30 s (apns.md E.3; Monal and Linphone stop at 25 s).
        public var backgroundDeadline: Duration
        /// How long to wait for the lease (the extension yields within a second).
        public var leaseTimeout: Duration
        /// Whether a message that arrives while the app is in front is also posted as a notification
        /// (off: the app shows it itself).
        public var showsNotificationsWhileForeground: Bool
        /// The device's content key, to open sealed call hints.
        public var sealKey: Data?
        /// How the app and its extension take turns writing the shared store; the defaults suit iOS.
        public var leaseTiming: LeaseLock.Timing
        /// How long a session stays open for a call that rings after a VoIP push, at most: the
        /// call's end arrives over it (rule 6). The server gives up ringing after 45 s.
        public var ringingSessionLimit: Duration
        /// How long saying `bye`, letting the lease go and suspending the store may take before a
        /// background completion handler is called anyway: the deadline plus this stays inside
        /// iOS's 30 s (apns.md E.3).
        public var backgroundCleanupLimit: Duration
        /// What the store keeps; it prunes itself as an app session closes, at most once per
        /// `retention.interval`, so it stays bounded however long the app lives.
        public var retention: StoreRetention

        /// Every setting but the endpoint has a default that suits an iOS app.
        public init(
            endpoint: SyncEndpoint, window: Int? = nil, backoff: ReconnectBackoff = ReconnectBackoff(),
            backgroundDeadline: Duration = .seconds(25), leaseTimeout: Duration = .seconds(3),
            showsNotificationsWhileForeground: Bool = false, sealKey: Data? = nil,
            leaseTiming: LeaseLock.Timing = LeaseLock.Timing(), ringingSessionLimit: Duration = .seconds(60),
            backgroundCleanupLimit: Duration = .seconds(3), credentials: (any CredentialSource)? = nil,
            retention: StoreRetention = StoreRetention()
        ) {
            self.retention = retention
            self.endpoint = endpoint
            self.credentials = credentials
            self.window = window
            self.backoff = backoff
            self.backgroundDeadline = backgroundDeadline
            self.leaseTimeout = leaseTimeout
            self.showsNotificationsWhileForeground = showsNotificationsWhileForeground
            self.sealKey = sealKey
            self.leaseTiming = leaseTiming
            self.ringingSessionLimit = ringingSessionLimit
            self.backgroundCleanupLimit = backgroundCleanupLimit
        }
    }

    /// The platform, through the ports (docs/design.md, "A portable core behind small ports").
    public struct Ports: Sendable {
        /// Posts and removes notifications (`UserNotificationCenterAdapter` on iOS).
        public var notificationCenter: any NotificationCenterPort
        /// Reports calls to the system (`CallKitReporter` on iOS).
        public var callReporter: any CallReporterPort
        /// Buys time to finish in the background (`UIKitBackgroundTime` on iOS).
        public var backgroundTime: (any BackgroundTimePort)?
        /// The clock every deadline runs on (`SystemClock`; a `ManualClock` in tests).
        public var clock: any ClientClock
        /// The WebSocket (`URLSessionSyncTransport` on iOS).
        public var transport: any SyncTransport
        /// Signals between the app and its extension (`DarwinProcessSignal` on iOS).
        public var processSignal: (any ProcessSignalPort)?

        /// The platform's ports; on iOS, `BeckonApp(setup:callKit:renderer:)` fills them in.
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

    /// Why the app holds its session.
    private enum Reason: Hashable {
        case foreground
        case background
        case ringing(callID: String)
    }

    /// The app's one session and the lease it writes with.
    private struct Live {
        var session: SyncSession
        var writer: LeaseGuard
    }

    /// One background sync, shared by the pushes that arrive while it runs.
    private struct BackgroundRun {
        var id: Int
        var completions: [BackgroundCompletion]
        /// Messages the session had stored when the run joined it.
        var storedBefore = 0
        var session: SyncSession?
    }

    /// The settings it was made with.
    public nonisolated let configuration: Configuration
    /// The store shared with the extension: `messages()`, `message(id:)`, `badge()`.
    public nonisolated let store: ClientStore
    package nonisolated let lock: LeaseLock
    package nonisolated let presenter: NotificationPresenter
    /// Calls: tell it when a call stops ringing here (`callFinished(uuid:)`).
    public nonisolated let calls: CallCoordinator
    let ports: Ports
    private nonisolated let lifecycles = Locked<[any AppLifecyclePort]>([])

    private var router = EntryPointRouter()
    private var opener: (@MainActor @Sendable (NotificationTap) -> Void)?
    private var actionHandler: (@Sendable (NotificationResponse) async -> Void)?
    private var reasons: Set<Reason> = []
    private var live: Live?
    private var opening: Task<Live?, Never>?
    private var closing: Task<Void, Never>?
    private var foregroundStarting: Task<Void, Never>?
    private var background: BackgroundRun?
    private var nextRunID = 0
    private var jitter: JitterSource
    private let inbox: AsyncStream<Input>
    private let inboxContinuation: AsyncStream<Input>.Continuation
    private var runner: Task<Void, Never>?
    private var updateObservers: [Int: AsyncStream<SyncSessionEvent>.Continuation] = [:]
    private var stateObservers: [Int: AsyncStream<ConnectionState>.Continuation] = [:]
    private var nextObserverID = 0

    private enum Input: Sendable {
        /// `activity`: the background task begun while UIKit's callback was still running.
        case event(AppEvent, activity: BackgroundActivity?)
        /// A VoIP push was reported as a ringing call.
        case ringing(callID: String)
        case barrier(CheckedContinuation<Void, Never>)
    }

    /// An app from its parts, for any platform; on iOS, `BeckonApp(setup:callKit:renderer:)`
    /// wires it. `renderer`: your text for a synced message.
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
    /// Leaving the foreground begins a background task here, while UIKit's callback still runs,
    /// so the time to say `bye` is bought before iOS could suspend the app.
    public nonisolated func handle(_ event: AppEvent) {
        // Every entry point but the last may write: GRDB asks for a resume in each (apns.md E.9).
        if case .didEnterBackground = event {} else { store.resume() }
        var activity: BackgroundActivity?
        if case .didEnterBackground = event, let backgroundTime = ports.backgroundTime {
            activity = BackgroundActivity("beckon.stop", port: backgroundTime)
        }
        inboxContinuation.yield(.event(event, activity: activity))
        Task { await self.startIfNeeded() }
    }

    /// Follows UIKit's application-state notifications, which UIKit posts with or without scenes
    /// (`AppLifecyclePort`). Call once, at launch; the app then forwards no lifecycle method.
    /// The app keeps the port for its life: an observer that went with it would hear nothing.
    public nonisolated func observeLifecycle(_ lifecycle: any AppLifecyclePort) {
        lifecycles.withLock { $0.append(lifecycle) }
        lifecycle.observe { [weak self] event in self?.handle(event.appEvent) }
    }

    /// What every session of the app reports, whichever brought it (in front, a background wake,
    /// a ringing call), for as long as the stream is iterated: the app's one place to hear of new
    /// messages (`.stored(message, isNew: true)`), reads elsewhere and ended calls, and of the
    /// connection for a status line (`.connected`, `.disconnected`, `.stopped`). Sessions come and
    /// go; this stream does not. It keeps the newest 256 events if the app reads slowly.
    public func updates() -> AsyncStream<SyncSessionEvent> {
        let (stream, continuation) = AsyncStream.makeStream(
            of: SyncSessionEvent.self, bufferingPolicy: .bufferingNewest(256))
        nextObserverID += 1
        let id = nextObserverID
        updateObservers[id] = continuation
        continuation.onTermination = { [weak self] _ in Task { await self?.stopUpdates(id) } }
        return stream
    }

    private func stopUpdates(_ id: Int) { updateObservers[id] = nil }

    /// Whether the app is connected now.
    public private(set) var connectionState = ConnectionState.idle

    /// The connection's state now, then each change, for as long as the stream is iterated: a
    /// status line's one source (a slow reader gets the newest).
    public func connectionStates() -> AsyncStream<ConnectionState> {
        let (stream, continuation) = AsyncStream.makeStream(
            of: ConnectionState.self, bufferingPolicy: .bufferingNewest(1))
        nextObserverID += 1
        let id = nextObserverID
        stateObservers[id] = continuation
        continuation.yield(connectionState)
        continuation.onTermination = { [weak self] _ in Task { await self?.stopStates(id) } }
        return stream
    }

    private func stopStates(_ id: Int) { stateObservers[id] = nil }

    private func setConnection(_ state: ConnectionState) {
        guard state != connectionState else { return }
        connectionState = state
        for observer in stateObservers.values { observer.yield(state) }
    }

    /// Only the app's current session moves the connection's state: a session that was replaced
    /// may report its end after the next one started.
    private func forward(_ event: SyncSessionEvent, from session: SyncSession) {
        for observer in updateObservers.values { observer.yield(event) }
        let current = live?.session === session
        switch event {
        case .connected where current: setConnection(.connected)
        case .disconnected where current: setConnection(.connecting)
        case .stopped where current || live == nil: setConnection(.idle)
        default: break
        }
    }

    /// Returns once every event reported before has been handled (not the background work it
    /// started).
    public func settled() async {
        startIfNeeded()
        await withCheckedContinuation { inboxContinuation.yield(.barrier($0)) }
    }

    /// PushKit's handler (synchronous; apns.md E.6). See `CallCoordinator.receiveVoIPPush`;
    /// `completion` is PushKit's, called once CallKit has answered. A call that rings keeps a
    /// session open until it stops ringing, so that its end on another device reaches this one
    /// (rule 6: the server sends no push for it).
    @discardableResult
    public nonisolated func receiveVoIPPush(
        _ payload: JSONValue, handler: (VoIPPush) -> CallReport, completion: @escaping @Sendable () -> Void = {}
    ) -> CallReport {
        // PushKit may resume a suspended app: its store takes locks again (apns.md E.9).
        store.resume()
        let report = calls.receiveVoIPPush(payload, handler: handler, completion: completion)
        if report.kind == .incoming {
            inboxContinuation.yield(.ringing(callID: report.call.callID))
            Task { await self.startIfNeeded() }
        }
        return report
    }

    /// `userNotificationCenter(_:willPresent:)`: how to present a notification that arrives
    /// while the app is in front. One of the app's own notifications is the app's to decide
    /// (`.notBeckon`); Beckon's shows unless the app shows it itself or it is read already.
    public func willPresent(identifier: String, userInfo: JSONValue) async -> ForegroundPresentation {
        guard let beckon = BeckonPushPayload(payload: userInfo) else { return .notBeckon }
        let ids = beckon.ids.isEmpty ? [identifier] : beckon.ids
        let show = await presenter.shouldPresent(identifier: identifier, messageIDs: ids, as: live?.writer)
        return show ? .show : .hide
    }

    /// `userNotificationCenter(_:didReceive:)`: returns once the response was handled (a tap
    /// routed, a "mark read" stored), so the adapter calls iOS's completion handler after.
    public func respond(to response: NotificationResponse) async {
        handle(.notificationResponse(response))
        await settled()
    }

    /// Handles the app's own notification actions (`NotificationResponse.Action.custom`), except
    /// `NotificationResponse.markReadAction`, which the SDK carries out itself.
    public func setActionHandler(_ handler: @escaping @Sendable (NotificationResponse) async -> Void) {
        actionHandler = handler
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
        live?.session.sendReadMarkers(ids)
    }

    /// The session that runs while the app is in front, if any.
    package var foregroundSession: SyncSession? { reasons.contains(.foreground) ? live?.session : nil }

    /// The router's state (for tests and diagnostics).
    package var routerState: EntryPointRouter { router }

    // MARK: The loop

    private func startIfNeeded() {
        guard runner == nil else { return }
        runner = Task { await self.run() }
    }

    private func run() async {
        for await input in inbox {
            switch input {
            case .barrier(let continuation): continuation.resume()
            case .event(let event, let activity): await process(event, activity: activity)
            case .ringing(let callID): startRingingSync(callID)
            }
        }
    }

    private func process(_ event: AppEvent, activity: BackgroundActivity?) async {
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
            leaveForeground(activity)
        case .didReceiveRemoteNotification(let payload, let state, let completion):
            let notification = RemoteNotification(payload: payload)
            await perform(router.handle(.remoteNotification(notification, state: state)), completion: completion)
            // Every path calls it once; this is the net under them (a second call does nothing).
            if !(background?.completions.contains { $0 === completion } ?? false) {
                suspendIfIdle()
                completion(.noData)
            }
        case .notificationResponse(let response):
            await respond(response)
        case .ready(let open):
            opener = open
            await perform(router.handle(.appReady), completion: nil)
        case .networkAvailable:
            await perform(router.handle(.networkAvailable), completion: nil)
            suspendIfIdle()
        case .protectedDataDidBecomeAvailable:
            // `handle` resumed the store; nothing here needs it (the next session opens it).
            suspendIfIdle()
        }
    }

    private func respond(_ response: NotificationResponse) async {
        // Answered, so it was on screen. An alert iOS showed by itself is otherwise found only by
        // the next reconcile, and a tap takes it off the screen before the app becomes active:
        // recorded here, with its `shown` receipt at its delivery (known to the ledger: nothing).
        try? await withWriter { writer in try self.store.recordDelivered([response.delivered], as: writer) }
        switch response.action {
        case .open:
            // The tap is in the messages' traces (docs/trace.md), sent with the next receipts.
            try? await withWriter { writer in try self.store.queueReceipts(response.messageIDs, kind: .opened, as: writer) }
            live?.session.sendReceipts()
            await perform(router.handle(.notificationTapped(response.tap)), completion: nil)
        case .dismiss:
            live?.session.sendReceipts()
        case .custom(NotificationResponse.markReadAction, _):
            // The action may have launched the app in the background: write, then suspend again.
            try? await markRead(response.messageIDs)
            suspendIfIdle()
        case .custom:
            await actionHandler?(response)
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
            case .backgroundSync:
                if let completion { startBackgroundSync(completion) }
            case .applyPush(let notification):
                await apply(notification)
            case .clearAllNotifications:
                try? await withWriter { writer in await self.presenter.clearAll(as: writer) }
            case .complete(let result):
                if let completion, !completion.wasCalled {
                    suspendIfIdle()
                    completion(result)
                }
            case .open(let tap):
                if let opener { await MainActor.run { opener(tap) } }
            case .reconcileNotifications:
                try? await withWriter { writer in await self.presenter.reconcile(as: writer) }
                live?.session.sendReceipts()
            case .reconnectNow:
                live?.session.reconnectNow()
            }
        }
    }

    /// Runs `body` with the lease: the live session's, or a short one of its own.
    private func withWriter(_ body: @Sendable (LeaseGuard) async throws -> Void) async throws {
        if let writer = live?.writer, writer.isHeld {
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

    // MARK: The session

    /// The app's session, opened for `reason` unless one is open already (it is shared: a second
    /// session of the app's role would replace the first, 4001). Nil if the lease could not be
    /// had in time.
    private func session(for reason: Reason) async -> SyncSession? {
        reasons.insert(reason)
        if let live { return live.session }
        let opened: Live?
        if let opening {
            opened = await opening.value
        } else {
            let task = Task { await self.open() }
            opening = task
            opened = await task.value
            if opening == task { opening = nil }
        }
        if opened == nil { reasons.remove(reason) }
        return opened?.session
    }

    private func open() async -> Live? {
        // A session still saying `bye` finishes first: its server side must not replace the new one.
        await closing?.value
        var endpoint = configuration.endpoint
        if let credentials = configuration.credentials {
            guard let credential = try? credentials.credential() else { return nil }
            endpoint.credential = credential
        }
        guard let writer = try? await lock.acquire(timeout: configuration.leaseTimeout) else { return nil }
        guard !reasons.isEmpty else {
            await writer.release()
            return nil
        }
        nextRunID += 1
        let session = SyncSession(
            configuration: SyncSession.Configuration(
                endpoint: endpoint, role: .app, window: configuration.window, backoff: configuration.backoff),
            store: store, writer: writer, transport: ports.transport, clock: ports.clock, presenter: presenter,
            calls: calls, jitter: JitterSource(seed: UInt64(bitPattern: Int64(nextRunID)) &+ 0x5EED))
        let opened = Live(session: session, writer: writer)
        live = opened
        setConnection(.connecting)
        let events = await session.events()
        Task { for await event in events { await self.forward(event, from: session) } }
        await session.start()
        Task { await self.watch(session) }
        return opened
    }

    /// A session that stops on its own (revoked, a protocol error, the lease lost) gives the
    /// lease back; in front, the next `didBecomeActive` opens another.
    private func watch(_ session: SyncSession) async {
        let reason = await session.untilStopped()
        guard reason != .requested, let current = live, current.session === session else { return }
        live = nil
        await current.writer.release()
        suspendIfIdle()
    }

    /// `reason` no longer needs the session; the last one closes it: `bye`, the last commits,
    /// the lease let go, the store suspended. Returns once that is done.
    private func drop(_ reason: Reason) async {
        reasons.remove(reason)
        guard reasons.isEmpty, let current = live else {
            await closing?.value
            suspendIfIdle()
            return
        }
        live = nil
        let retention = configuration.retention
        let task = Task { [store] in
            await current.session.stopAndWait()
            // Still holding the lease: a few milliseconds, once a day.
            _ = try? store.pruneIfDue(retention, as: current.writer)
            await current.writer.release()
        }
        closing = task
        await task.value
        if closing == task { closing = nil }
        suspendIfIdle()
    }

    /// No SQLite lock from here until the next entry point (0xdead10cc, apns.md E.9): only when
    /// nothing of the app's runs.
    private func suspendIfIdle() {
        if !router.isActive && reasons.isEmpty && live == nil && opening == nil && background == nil {
            store.suspend()
        }
    }

    // MARK: Foreground

    private func startForeground() {
        guard !reasons.contains(.foreground) || live == nil, foregroundStarting == nil else { return }
        foregroundStarting = Task { await self.openForeground() }
    }

    private func openForeground() async {
        defer { foregroundStarting = nil }
        var attempt = 0
        while router.isActive {
            if await session(for: .foreground) != nil {
                if !router.isActive { await drop(.foreground) }
                return
            }
            // The extension did not let go in time (or the store failed): try again.
            attempt += 1
            try? await ports.clock.sleep(for: configuration.backoff.delay(attempt: attempt, unit: jitter.next()))
        }
    }

    /// In the background task begun with `didEnterBackground`: `bye`, the last commits and the
    /// lease let go before iOS suspends the app (docs/design.md, "A lease, not a held file
    /// lock"). If iOS takes the time back first, the session stops at once and the store takes
    /// no more locks, before the task ends (`BackgroundActivity`).
    private func leaveForeground(_ activity: BackgroundActivity?) {
        foregroundStarting?.cancel()
        let session = live?.session
        let store = self.store
        activity?.onExpiry {
            session?.preempt()
            store.suspend()
        }
        Task {
            await self.drop(.foreground)
            activity?.end()
        }
    }

    // MARK: Ringing

    private func startRingingSync(_ callID: String) {
        // In front, the session is open already and hears the end.
        guard !router.isActive else { return }
        Task { await self.runRingingSync(callID) }
    }

    /// Holds the session while `callID` rings here, up to `ringingSessionLimit`. If no session
    /// can be had — before the first unlock neither the store nor the credential can be read
    /// (apns.md E.9) — its end cannot reach this phone: the call stops ringing at the limit, as
    /// missed, rather than for ever.
    private func runRingingSync(_ callID: String) async {
        let reason = Reason.ringing(callID: callID)
        // The session writes (lease renewals, messages) for as long as the call rings: iOS must
        // not suspend the app meanwhile, holding a lock (apns.md E.9). If it takes the time back,
        // the session stops and the store takes no more locks before the task ends.
        let activity = ports.backgroundTime.map { BackgroundActivity("beckon.ringing", port: $0) }
        defer { activity?.end() }
        let store = self.store
        let calls = self.calls
        let heldOnce = Locked(false)
        activity?.onExpiry { [weak self] in
            store.suspend()
            // Frozen from here on, the app cannot hear the call's end: one that no session could
            // follow stops ringing now, as missed, rather than for ever.
            if !heldOnce.withLock({ $0 }), calls.isRinging(callID) { calls.callEnded(callID, outcome: .missed, as: nil) }
            Task { await self?.live?.session.preempt() }
        }
        let clock = ports.clock
        let until = clock.now().addingTimeInterval(configuration.ringingSessionLimit.timeInterval)
        while calls.isRinging(callID), clock.now() < until, !router.isActive {
            if !reasons.contains(reason) || live == nil {
                if await session(for: reason) != nil { heldOnce.withLock { $0 = true } }
            }
            do { try await clock.sleep(for: .seconds(1)) } catch { break }
        }
        if reasons.contains(reason) { await drop(reason) }
        if !heldOnce.withLock({ $0 }), calls.isRinging(callID), !router.isActive {
            calls.callEnded(callID, outcome: .missed, as: nil)
        }
    }

    // MARK: Background

    private func startBackgroundSync(_ completion: BackgroundCompletion) {
        if background != nil {
            background?.completions.append(completion)
            return
        }
        nextRunID += 1
        let id = nextRunID
        background = BackgroundRun(id: id, completions: [completion])
        let clock = ports.clock
        let deadline = configuration.backgroundDeadline
        Task {
            do { try await clock.sleep(for: deadline) } catch { return }
            await self.backgroundDeadlineReached(id)
        }
        Task { await self.runBackgroundSync(id) }
    }

    private func runBackgroundSync(_ id: Int) async {
        // Shared with the session already open, if any (in front but inactive, seed 001's
        // app-switcher case; or a ringing call): a second one would replace it (4001).
        let joining = live != nil
        guard let session = await session(for: .background) else {
            await finishBackground(id, .failed)
            return
        }
        guard background?.id == id else { return }
        let storedBefore = joining ? await session.newMessageCount : 0
        background?.storedBefore = storedBefore
        background?.session = session
        if !joining, let writer = live?.writer { await presenter.reconcile(as: writer) }
        let caughtUp = await session.untilCaughtUp()
        let stored = await session.newMessageCount - storedBefore
        await finishBackground(id, !caughtUp ? .failed : (stored > 0 ? .newData : .noData))
    }

    /// The internal deadline: the session is let go and the completion handlers are called with
    /// what was stored so far.
    private func backgroundDeadlineReached(_ id: Int) async {
        guard let run = background, run.id == id else { return }
        let stored = await (run.session?.newMessageCount ?? 0) - run.storedBefore
        await finishBackground(id, stored > 0 ? .newData : .failed)
    }

    /// Cleans up first — `bye`, the lease let go, the store suspended — and then calls the
    /// completion handlers, since iOS may suspend the app as soon as the last one returns
    /// (apns.md E.9). The clean-up gets `backgroundCleanupLimit`; past it the store is
    /// suspended (no new lock) and the handlers are called anyway.
    private func finishBackground(_ id: Int, _ result: BackgroundFetchResult) async {
        guard let run = background, run.id == id else { return }
        background = nil
        let cleanup = Task { await self.drop(.background) }
        let cleanedUp = await Self.first(cleanup, orAfter: configuration.backgroundCleanupLimit, on: ports.clock)
        if !cleanedUp && !router.isActive && reasons.isEmpty { store.suspend() }
        for completion in run.completions { completion(result) }
    }

    /// Whether `task` finished within `limit` (it goes on either way).
    private static func first(_ task: Task<Void, Never>, orAfter limit: Duration, on clock: any ClientClock) async -> Bool {
        let outcome = Locked<CheckedContinuation<Bool, Never>?>(nil)
        let resume = { @Sendable (finished: Bool) in
            outcome.withLock { continuation in
                continuation?.resume(returning: finished)
                continuation = nil
            }
        }
        var timer: Task<Void, Never>?
        let finished = await withCheckedContinuation { continuation in
            outcome.withLock { $0 = continuation }
            Task { await task.value; resume(true) }
            timer = Task {
                guard (try? await clock.sleep(for: limit)) != nil else { return }
                resume(false)
            }
        }
        timer?.cancel()
        return finished
    }
}
