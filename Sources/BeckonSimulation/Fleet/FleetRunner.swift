import APNSCore
import BeckonClient
import BeckonDelivery
import DeviceSimulator
import Foundation
import Logging

/// Plays a fleet: N phones with a mix of behaviours against one node, M messages at seeded
/// times, then reads the figures off the timeline (docs/simulator.md, "Fleets").
public enum FleetRunner {
    public static func run(
        _ configuration: FleetConfiguration, logLevel: Logger.Level = .error, progress: @Sendable (String) -> Void = { _ in }
    ) async throws -> FleetReport {
        let started = Date()
        var policy = DeliveryPolicy()
        policy.strategy = configuration.strategy
        let server = try await SimulationServer.start(policy: policy, timeScale: configuration.timeScale, logLevel: logLevel)
        let behaviours = configuration.mix.assign(configuration.devices, seed: configuration.seed)
        progress("registering \(configuration.devices) phones")
        let registered: [SimulationServer.RegisteredPhone]
        do {
            registered = try await concurrently(behaviours.count, width: configuration.concurrency) { index in
                try await server.registerPhone(name(index), user: user(index), traits: behaviours[index].traits)
            }
        } catch {
            await server.stop()
            throw error
        }

        let timeline = Timeline(clock: ScaledClock(scale: configuration.timeScale))
        let router = PushRouter(timeline: timeline)
        server.emulator.observeDevices { router.route($0) }
        let devices = behaviours.indices.map { index in
            server.makeDevice(
                name(index), phone: registered[index], traits: behaviours[index].traits,
                policy: behaviours[index].policy(reclaimAfter: configuration.reclaimAfter),
                seed: configuration.seed &+ UInt64(index), timeline: timeline, router: router, leaseTimingFactor: 10)
        }

        // The script: each phone's user steps, and the messages at seeded times.
        var random = SeededRandom(seed: configuration.seed ^ 0x5EED)
        enum Step { case user(Int, UserAction), post(Int) }
        var steps: [(at: Double, step: Step)] = []
        for (index, behaviour) in behaviours.enumerated() {
            for (at, action) in behaviour.steps(duration: configuration.duration) { steps.append((at, .user(index, action))) }
        }
        let window = max(1, configuration.duration * 0.6 - 10)
        for _ in 0..<configuration.messages {
            steps.append((10 + random.unit() * window, .post(random.below(devices.count))))
        }
        steps.sort { $0.at < $1.at }

        progress("playing \(steps.count) steps over \(Int(configuration.duration)) virtual seconds")
        let posted = PostLog()
        await withTaskGroup(of: Void.self) { tasks in
            for (at, step) in steps {
                try? await timeline.clock.sleep(untilElapsed: at)
                switch step {
                case .user(let index, let action):
                    let device = devices[index]
                    tasks.addTask { await device.send(.user(action)) }
                case .post(let index):
                    tasks.addTask {
                        let postedAt = timeline.clock.elapsed
                        let id: String
                        do {
                            id = try await server.post(to: [user(index)], text: "fleet", kind: .message, urgency: nil)
                        } catch {
                            posted.failed(error)
                            return
                        }
                        posted.append(.init(id: id, device: name(index), behaviour: behaviours[index], at: postedAt))
                        // On the recipient's lane, so `--events` shows whose message it was.
                        timeline.record(name(index), .messagePosted(id: id))
                    }
                }
            }
        }
        try? await timeline.clock.sleep(untilElapsed: configuration.duration)
        if let (count, first) = posted.failures { progress("\(count) posts failed; the first: \(first)") }
        progress("measuring")
        // The phones stop first, so no receipt is queued while the server's are read.
        for device in devices { await device.shutdown() }
        let events = timeline.all
        let (check, findings) = await traceCheck(posted.all, events: events, devices: devices, server: server, router: router)
        var figures = FleetFigures(posted: posted.all, events: events, shown: check.shownStatuses())
        figures.traceFindings = findings.map(\.description)
        server.emulator.observeDevices(nil)
        await server.stop()
        return FleetReport(
            configuration: configuration, figures: figures, realSeconds: Date().timeIntervalSince(started), events: events)
    }

    /// Each posted message's trace against the emulator and the recipient's timeline; a trace
    /// or a phone's store that cannot be read leaves its messages unreported (never made up).
    static func traceCheck(
        _ posted: [FleetFigures.Posted], events: [TimelineEvent], devices: [SimulatedDevice], server: SimulationServer,
        router: PushRouter
    ) async -> (TraceCheck, [TraceFinding]) {
        var check = TraceCheck(
            messages: posted.map(\.id), traces: [:], events: events, accepted: router.accepted, phones: [:], reads: [:])
        let byName = Dictionary(devices.map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first })
        let recipients = Dictionary(grouping: posted, by: \.device)
        // Three looks, not ten: each reads every recipient's store.
        let findings = try? await check.settle(looks: 3) { check in
            check.traces = (try? await server.traces(of: check.messages)) ?? [:]
            // After the traces (delivery goes on meanwhile): every push they say was sent is in it.
            check.accepted = router.accepted
            for (name, messages) in recipients {
                check.phones[name] = try? await byName[name]?.receipts(of: messages.map(\.id))
            }
        }
        return (check, findings ?? check.findings())
    }

    static func name(_ index: Int) -> String { "phone-\(index)" }
    static func user(_ index: Int) -> String { "user-\(index)" }

    /// Runs `body` for 0..<count with at most `width` at once; results in index order.
    static func concurrently<Result: Sendable>(
        _ count: Int, width: Int, _ body: @escaping @Sendable (Int) async throws -> Result
    ) async throws -> [Result] {
        try await withThrowingTaskGroup(of: (Int, Result).self) { tasks in
            var results = [Result?](repeating: nil, count: count)
            var next = 0
            while next < min(width, count) {
                let index = next
                tasks.addTask { (index, try await body(index)) }
                next += 1
            }
            while let (index, result) = try await tasks.next() {
                results[index] = result
                if next < count {
                    let index = next
                    tasks.addTask { (index, try await body(index)) }
                    next += 1
                }
            }
            return results.map { $0! }
        }
    }
}

/// The messages posted so far (posts finish in any order).
final class PostLog: Sendable {
    private let entries = Locked<[FleetFigures.Posted]>([])
    private let errors = Locked<(count: Int, first: String?)>((0, nil))
    func append(_ entry: FleetFigures.Posted) { entries.withLock { $0.append(entry) } }
    var all: [FleetFigures.Posted] { entries.withLock { $0 } }

    func failed(_ error: any Error) {
        errors.withLock { errors in
            errors.count += 1
            errors.first = errors.first ?? "\(error)"
        }
    }

    /// How many posts failed, and the first error.
    var failures: (Int, String)? {
        errors.withLock { errors in errors.first.map { (errors.count, $0) } }
    }
}
