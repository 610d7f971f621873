import BeckonClient
import BeckonJSON
import BeckonProtocol
import Foundation

/// One simulated iPhone running the app with the real SDK (docs/simulator.md): the iOS model
/// (`SimulatedPhone`) decides, this actor carries its actions out — it starts, freezes and kills
/// the app's process, calls its entry points, runs the extension, keeps the network — and feeds
/// back what the app did. Pushes come from the APNs emulator's device side.
public actor SimulatedDevice {
    public nonisolated let configuration: DeviceConfiguration
    public nonisolated let timeline: Timeline
    nonisolated let network = PhoneNetwork()
    nonisolated let signal = LocalProcessSignal()
    nonisolated let protectedData = PhoneProtectedData()
    /// Tells APNs whether the phone is reachable (the emulator's `setDeviceOnline`).
    nonisolated let setAPNsOnline: @Sendable (Bool) -> Void
    nonisolated let inbox: AsyncStream<PhoneEvent>.Continuation
    /// The expiration handlers of open background tasks, by id.
    nonisolated let backgroundTaskExpirations = Locked<[Int: @Sendable () -> Void]>([:])

    public private(set) var phone: SimulatedPhone
    /// Messages the app opened for the user after a tap.
    public private(set) var opened: [String] = []
    private var process: AppProcess?
    private var extensionHost: ExtensionHost?
    private var queue: [PhoneEvent] = []
    private var draining = false
    private var timer: Task<Void, Never>?
    private var timerDeadline: Double?
    private var loop: Task<Void, Never>?

    public init(configuration: DeviceConfiguration, timeline: Timeline, setAPNsOnline: @escaping @Sendable (Bool) -> Void) {
        self.configuration = configuration
        self.timeline = timeline
        self.setAPNsOnline = setAPNsOnline
        self.phone = SimulatedPhone(traits: configuration.traits, policy: configuration.policy, seed: configuration.seed)
        let (stream, continuation) = AsyncStream.makeStream(of: PhoneEvent.self)
        self.inbox = continuation
        Task { [stream] in await self.run(stream) }
    }

    var clock: ScaledClock { timeline.clock }
    public nonisolated var name: String { configuration.name }

    /// Reports an event from any thread; events are handled in the order posted.
    public nonisolated func post(_ event: PhoneEvent) { inbox.yield(event) }

    /// A push APNs delivered to this phone.
    public nonisolated func receive(_ push: DevicePush) { post(.pushArrived(push)) }

    /// Handles an event now (after any already being handled).
    public func send(_ event: PhoneEvent) {
        queue.append(event)
        guard !draining else { return }
        draining = true
        while !queue.isEmpty {
            let next = queue.removeFirst()
            for action in phone.handle(next, at: clock.elapsed) { perform(action) }
        }
        draining = false
        armTimer()
    }

    /// The user reads these messages in the app (it must be running): stored as read, their
    /// notifications removed, the server told.
    public func read(_ ids: [String]) async throws {
        guard let process else { throw PhoneUnreachable() }
        try await process.app.markRead(ids)
    }

    /// The ids of the messages in the phone's store, by sequence.
    public func storedMessages() throws -> [StoredMessage] {
        let store = try ClientStore(path: configuration.storePath, clock: clock)
        defer { store.close() }
        return try store.messages()
    }

    /// The receipts the SDK queued and has not sent, and which of `messageIDs` its notification
    /// ledger knows (read from the phone's store, as the next launch would).
    public func receipts(of messageIDs: [String]) throws -> PhoneReceipts {
        let store = try ClientStore(path: configuration.storePath, clock: clock)
        defer { store.close() }
        var receipts = PhoneReceipts()
        for receipt in try store.pendingReceipts(limit: Int.max) {
            receipts.pending[receipt.messageID, default: []].insert(receipt.kind)
        }
        for id in messageIDs where try store.ledgerEntry(messageID: id) != nil { receipts.inLedger.insert(id) }
        return receipts
    }

    /// Ends the app and the timers: the run is over.
    public func shutdown() {
        timer?.cancel()
        process?.kill()
        process = nil
        inbox.finish()
    }

    private func run(_ stream: AsyncStream<PhoneEvent>) async {
        for await event in stream { send(event) }
    }

    private func armTimer() {
        guard let deadline = phone.nextDeadline else {
            timer?.cancel()
            timer = nil
            timerDeadline = nil
            return
        }
        guard deadline != timerDeadline else { return }
        timer?.cancel()
        timerDeadline = deadline
        let clock = self.clock
        timer = Task { [weak self] in
            do { try await clock.sleep(untilElapsed: deadline) } catch { return }
            await self?.timerFired(deadline)
        }
    }

    private func timerFired(_ deadline: Double) {
        guard timerDeadline == deadline else { return }
        timerDeadline = nil
        send(.tick)
    }

    // MARK: Carrying out the phone's actions

    private func perform(_ action: PhoneAction) {
        switch action {
        case .record(let what): timeline.record(name, what)
        case .startApp: process = makeProcess()
        case .endApp:
            process?.kill()
            process = nil
        case .suspendApp:
            // iOS kills an app it suspends while the app holds a lock on a file in the shared
            // container (0xdead10cc, apns.md E.9): a transaction in flight at this moment.
            if process?.store.isInTransaction == true { queue.append(.lockHeldWhenSuspended) }
            process?.suspend()
        case .resumeApp: process?.resume()
        case .lifecycle(let event): lifecycle(event)
        case .remoteNotification(let push, let state, let token):
            let completion = BackgroundCompletion { [weak self] result in
                self?.post(.completionCalled(token: token, result: result.rawValue))
            }
            process?.app.handle(.didReceiveRemoteNotification(push.payload, state: state, completion: completion))
        case .voip(let push):
            guard let process else { return }
            _ = process.callKit.takeReported()
            if configuration.traits.reportsCalls {
                process.app.receiveVoIPPush(push.payload) { .incoming($0) }
            }
            // PushKit checks when the handler returns (apns.md E.6).
            queue.append(.voipHandled(push: push.id, reported: process.callKit.takeReported()))
        case .runExtension(let push, _):
            guard let host = extensionProcess() else {
                queue.append(.extensionFinished(push: push.id, .crashed))
                return
            }
            host.run(push) { [weak self] result in self?.post(.extensionFinished(push: push.id, result)) }
        case .expireExtension(let push): extensionHost?.expire(push)
        case .endExtension:
            extensionHost?.end()
            extensionHost = nil
        case .expireBackgroundTasks(let ids):
            // Each handler must end its task before it returns, or iOS terminates the app (apns.md E.9).
            for id in ids { backgroundTaskExpirations.withLock { $0[id] }?() }
            let leftOpen = backgroundTaskExpirations.withLock { open in ids.filter { open.removeValue(forKey: $0) != nil } }
            if !leftOpen.isEmpty { queue.append(.backgroundTasksLeftOpen(leftOpen)) }
        case .askWillPresent(let push, _):
            guard let app = process?.app else { return }
            Task { [weak self] in
                let show = await app.willPresent(identifier: push.identifier, userInfo: push.payload)
                self?.post(.willPresentAnswered(push: push.id, show: show == .show))
            }
        case .tap(let identifier, let payload, let shownAt):
            process?.app.handle(
                .notificationResponse(
                    NotificationResponse(
                        identifier: identifier, userInfo: payload, action: .open, date: clock.origin.addingTimeInterval(shownAt))))
        case .setProtectedData(let available):
            protectedData.set(available)
            if available { process?.lifecycle.post(.protectedDataDidBecomeAvailable) }
        case .setOnline(let online):
            network.setOnline(online)
            setAPNsOnline(online)
            // What `NWPathMonitor` tells the app: it reconnects now rather than at its backoff.
            if online { process?.app.handle(.networkAvailable) }
        }
    }

    private func lifecycle(_ event: PhoneAction.Lifecycle) {
        guard let process else { return }
        switch event {
        case .didFinishLaunching(let notification): process.app.handle(.didFinishLaunching(remoteNotification: notification))
        case .willEnterForeground: process.lifecycle.post(.willEnterForeground)
        case .didBecomeActive:
            process.lifecycle.post(.didBecomeActive)
            // The UI is up: a tap kept until now is opened (seed 001; docs/simulator.md, "Field practice the model uses").
            if process.ready.withLock({ ready in
                defer { ready = true }
                return !ready
            }) {
                process.app.handle(
                    .ready(open: { [weak self] tap in
                        guard let self else { return }
                        Task { await self.opened(tap) }
                    }))
            }
        case .willResignActive: process.lifecycle.post(.willResignActive)
        case .didEnterBackground: process.lifecycle.post(.didEnterBackground)
        }
    }

    private func opened(_ tap: NotificationTap) {
        let what = tap.messageID ?? tap.identifier ?? "?"
        opened.append(what)
        timeline.record(name, .note("opened \(what)"))
    }

    private func makeProcess() -> AppProcess? {
        let processClock = ProcessClock(base: clock)
        let transport = GatedTransport(
            inner: SimulatorTransport.make(), role: "app", device: name, timeline: timeline, network: network,
            latency: configuration.policy.networkLatencySeconds)
        let callKit = PhoneCallKit(device: name, timeline: timeline)
        // Opened at its first use, as on a phone: before the first unlock it cannot be.
        let protectedData = self.protectedData
        let store = ClientStore.deferred(path: configuration.storePath, clock: processClock, canOpen: { protectedData.isAvailable })
        let app = BeckonApp(
            configuration: .init(
                endpoint: configuration.endpoint, leaseTimeout: .seconds(3) * clock.scale * configuration.leaseTimingFactor,
                sealKey: configuration.sealKey,
                leaseTiming: .scaled(by: clock.scale * configuration.leaseTimingFactor),
                credentials: protectedData.credentials(configuration.credential)),
            store: store,
            ports: .init(
                notificationCenter: PhoneNotificationCenter(device: self, clock: processClock), callReporter: callKit,
                backgroundTime: PhoneBackgroundTime(device: self), clock: processClock, transport: transport,
                processSignal: signal),
            renderer: SimulatedApp.renderer)
        let lifecycle = PhoneLifecycle()
        app.observeLifecycle(lifecycle)
        return AppProcess(app: app, store: store, clock: processClock, transport: transport, callKit: callKit, lifecycle: lifecycle)
    }

    private func extensionProcess() -> ExtensionHost? {
        if let extensionHost, !extensionHost.isDead { return extensionHost }
        extensionHost = ExtensionHost(
            configuration: configuration, clock: clock, network: network, timeline: timeline, signal: signal,
            protectedData: protectedData, device: self)
        return extensionHost
    }
}
