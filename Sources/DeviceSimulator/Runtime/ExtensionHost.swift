import BeckonClient
import BeckonProtocol
import Foundation

/// The notification service extension's process on the simulated phone: the SDK's real
/// `NotificationServiceHandler` over the shared store, with role `extension` for the lease and
/// for its sync (the `filtering` strategy). iOS reuses extension processes, so one host serves
/// every push (docs/simulator.md, "Field practice the model uses").
final class ExtensionHost: Sendable {
    let handler: NotificationServiceHandler
    let store: ClientStore
    let clock: ProcessClock
    private let runs = Locked<[String: NotificationServiceRun]>([:])

    init(
        configuration: DeviceConfiguration, clock: ScaledClock, network: PhoneNetwork, timeline: Timeline,
        signal: LocalProcessSignal
    ) throws {
        let processClock = ProcessClock(base: clock)
        self.clock = processClock
        store = try ClientStore(path: configuration.storePath, clock: processClock)
        let lock = LeaseLock(
            store: store, holder: LeaseHolder(role: .extension), clock: processClock, signal: signal,
            timing: .scaled(by: clock.scale * configuration.leaseTimingFactor))
        var sync: ExtensionSync?
        if configuration.traits.filtering {
            let transport = GatedTransport(
                inner: SimulatorTransport.make(), role: "extension", device: configuration.name, timeline: timeline,
                network: network, latency: configuration.policy.networkLatencySeconds)
            sync = ExtensionSync(
                endpoint: configuration.endpoint, store: store, lock: lock, transport: transport, clock: processClock)
        }
        let fetcher = GatedFetcher(
            inner: URLSessionMessageFetcher(baseURL: configuration.baseURL, credential: configuration.credential),
            network: network)
        handler = NotificationServiceHandler(
            // The lease wait stays in virtual time: a phone's extension waits 2 s, then lets the
            // app record what it shows (`willPresent`).
            configuration: .init(sealKey: configuration.sealKey, canSuppress: configuration.traits.filtering),
            fetcher: fetcher, clock: processClock, memory: ExtensionMemoryGauge(limit: configuration.policy.extensionMemoryBytes),
            store: store, lock: lock, renderer: SimulatedApp.renderer, sync: sync)
    }

    /// `didReceive(_:withContentHandler:)`; `done` gets what iOS shows.
    func run(_ push: DevicePush, done: @escaping @Sendable (ExtensionResult) -> Void) {
        let run = handler.receive(IncomingNotification(identifier: push.identifier, payload: push.payload)) { outcome in
            switch outcome {
            case .suppressed: done(.suppressed)
            case .rewritten(let content): done(.content(text: content.displayText, outcome: "rewritten"))
            case .fallback(let content, let reason): done(.content(text: content.displayText, outcome: "fallback-\(reason)"))
            }
        }
        runs.withLock { $0[push.id] = run }
    }

    /// The process ends: its store closes under any run still going.
    func end() {
        let open = runs.withLock { runs in
            defer { runs.removeAll() }
            return Array(runs.values)
        }
        for run in open { run.timeWillExpire() }
        clock.set(.dead)
        store.close()
    }

    /// `serviceExtensionTimeWillExpire`.
    func expire(_ push: String) {
        runs.withLock { $0.removeValue(forKey: push) }?.timeWillExpire()
    }
}
