import BeckonClient
import BeckonProtocol
import Foundation

/// The notification service extension's process on the simulated phone: the SDK's real
/// `NotificationServiceHandler` over the shared store, with role `extension` for the lease and
/// for its sync (the `filtering` strategy). iOS reuses extension processes, so one host serves
/// every push (docs/simulator.md, "Field practice the model uses"), until the phone restarts or
/// iOS kills it for its memory (`isDead`).
final class ExtensionHost: Sendable {
    let handler: NotificationServiceHandler
    let store: ClientStore
    let clock: ProcessClock
    let memory: ExtensionMemory
    /// Runs in flight, by push: how to end each (its `run` once `receive` returned).
    private struct Entry {
        var run: NotificationServiceRun?
        var done: @Sendable (ExtensionResult) -> Void
    }

    private let runs = Locked<[String: Entry]>([:])
    private let dead = Locked(false)

    init(
        configuration: DeviceConfiguration, clock: ScaledClock, network: PhoneNetwork, timeline: Timeline,
        signal: LocalProcessSignal, protectedData: PhoneProtectedData, device: SimulatedDevice
    ) {
        let processClock = ProcessClock(base: clock)
        self.clock = processClock
        // As the app's: opened at its first use, which before the first unlock cannot be.
        store = ClientStore.deferred(path: configuration.storePath, clock: processClock, canOpen: { protectedData.isAvailable })
        let credentials = protectedData.credentials(configuration.credential)
        let lock = LeaseLock(
            store: store, holder: LeaseHolder(role: .extension), clock: processClock, signal: signal,
            timing: .scaled(by: clock.scale * configuration.leaseTimingFactor))
        var sync: ExtensionSync?
        if configuration.traits.filtering {
            let transport = GatedTransport(
                inner: SimulatorTransport.make(), role: "extension", device: configuration.name, timeline: timeline,
                network: network, latency: configuration.policy.networkLatencySeconds)
            // Every message the sync brings gets a notification of its own, not only the one the
            // push names: APNs delivers only the newest push to a phone that was offline (apns.md E.1).
            let presenter = NotificationPresenter(
                store: store, center: PhoneNotificationCenter(device: device, clock: processClock, isExtension: true),
                role: .extension, clock: processClock, renderer: SimulatedApp.renderer)
            sync = ExtensionSync(
                endpoint: configuration.endpoint, store: store, lock: lock, transport: transport, clock: processClock,
                presenter: presenter, credentials: credentials)
        }
        memory = ExtensionMemory(limit: configuration.policy.extensionMemoryBytes)
        let fetcher = GatedFetcher(
            inner: URLSessionMessageFetcher(baseURL: configuration.baseURL, credentials: credentials), network: network,
            memory: memory)
        handler = NotificationServiceHandler(
            // The lease wait stays in virtual time: a phone's extension waits 2 s, then lets the
            // app record what it shows (`willPresent`).
            configuration: .init(sealKey: configuration.sealKey, canSuppress: configuration.traits.filtering),
            fetcher: fetcher, clock: processClock, memory: ExtensionMemoryGauge(memory: memory),
            store: store, lock: lock, renderer: SimulatedApp.renderer, sync: sync)
        memory.whenOverLimit { [weak self] in self?.killForMemory() }
    }

    /// Whether iOS ended this process (its memory); the next push starts another.
    var isDead: Bool { dead.withLock { $0 } }

    /// `didReceive(_:withContentHandler:)`; `done` gets what iOS shows.
    func run(_ push: DevicePush, done: @escaping @Sendable (ExtensionResult) -> Void) {
        let memory = self.memory
        let finished: @Sendable (ExtensionResult) -> Void = { [weak self] result in
            guard self?.runs.withLock({ $0.removeValue(forKey: push.id) }) != nil else { return }
            memory.release(push.messageIDs)
            done(result)
        }
        runs.withLock { $0[push.id] = Entry(run: nil, done: finished) }
        let run = handler.receive(IncomingNotification(identifier: push.identifier, payload: push.payload)) { outcome in
            switch outcome {
            case .suppressed: finished(.suppressed)
            case .rewritten(let content):
                let named = BeckonPushPayload(payload: .object(content.userInfo))?.ids
                finished(.content(text: content.displayText, outcome: "rewritten", messages: named))
            case .fallback(let content, let reason): finished(.content(text: content.displayText, outcome: "fallback-\(reason)"))
            }
        }
        runs.withLock { $0[push.id]?.run = run }
    }

    /// The process ends: its store closes under any run still going.
    func end() {
        let open = runs.withLock { runs in
            defer { runs.removeAll() }
            return runs.values.compactMap(\.run)
        }
        for run in open { run.timeWillExpire() }
        clock.set(.dead)
        store.close()
    }

    /// `serviceExtensionTimeWillExpire`.
    func expire(_ push: String) {
        runs.withLock { $0.removeValue(forKey: push) }?.run?.timeWillExpire()
    }

    /// Over its memory limit: iOS kills the process, and every push it was working on shows its
    /// own content (apns.md E.4).
    private func killForMemory() {
        guard dead.withLock({ dead in
            defer { dead = true }
            return !dead
        }) else { return }
        let open = runs.withLock { runs in
            defer { runs.removeAll() }
            return Array(runs.values)
        }
        clock.set(.dead)
        for entry in open { entry.done(.overMemory) }
        store.close()
    }
}
