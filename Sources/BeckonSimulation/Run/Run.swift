import BeckonClient
import DeviceSimulator
import Foundation

/// One scenario run in progress: the phones, the names the scenario gave messages and calls,
/// and the steps that could not be played.
struct Run {
    let scenario: Scenario
    let server: SimulationServer
    let timeline: Timeline
    let router: PushRouter
    var devices: [String: SimulatedDevice] = [:]
    /// The scenario's names (`m1`) for message and call ids, both ways.
    var ids: [String: String] = [:]
    var names: [String: String] = [:]
    /// Messages a user read on some phone.
    var read: Set<String> = []
    /// Device → the messages read on it.
    var reads: [String: Set<String>] = [:]
    var failedSteps: [String] = []

    init(scenario: Scenario, server: SimulationServer, timeline: Timeline, router: PushRouter) {
        self.scenario = scenario
        self.server = server
        self.timeline = timeline
        self.router = router
    }

    mutating func play(_ step: ScenarioStep) async {
        do {
            try await perform(step.action)
        } catch {
            failedSteps.append("at \(step.at) s: \(error)")
            timeline.record(step.action.device ?? TimelineEvent.server, .note("step failed: \(error)"))
        }
    }

    private mutating func perform(_ action: ScenarioAction) async throws {
        switch action {
        case .user(let device, let userAction):
            try await phone(device).send(.user(userAction))
        case .tap(let device, let message), .swipeAway(let device, let message):
            let phone = try phone(device)
            let id = ids[message] ?? message
            guard let shown = await phone.phone.notifications.last(where: { $0.identifier == id || $0.messages.contains(id) })
            else {
                throw SimulationError("no notification shows \(message) on \(device)")
            }
            if case .tap = action {
                await phone.send(.user(.tap(shown.identifier)))
            } else {
                await phone.send(.user(.swipeAway(shown.identifier)))
            }
        case .read(let device, let messages):
            let resolved = messages.map { ids[$0] ?? $0 }
            timeline.record(device, .user("read \(messages.joined(separator: ", "))"))
            try await phone(device).read(resolved)
            read.formUnion(resolved)
            reads[device, default: []].formUnion(resolved)
        case .post(let name, let users, let text, let kind, let urgency):
            let id = try await server.post(to: users, text: text, kind: kind, urgency: urgency)
            ids[name] = id
            names[id] = name
            timeline.record(TimelineEvent.server, .messagePosted(id: id))
        case .endCall(let call, let outcome):
            let id = ids[call] ?? call
            timeline.record(TimelineEvent.server, .note("call \(call) ended: \(outcome.rawValue)"))
            try await server.endCall(id, outcome: outcome)
        }
    }

    private func phone(_ name: String) throws -> SimulatedDevice {
        guard let device = devices[name] else { throw SimulationError("no device named \(name)") }
        return device
    }

    func shutdown() async {
        for device in devices.values { await device.shutdown() }
    }

    /// Ends the run: reads each phone's final state, checks the invariants, builds the report.
    func finish() async -> SimulationReport {
        var finals: [String: PhoneOutcome] = [:]
        for (name, device) in devices {
            let stored = (try? await device.storedMessages().map(\.id)) ?? []
            finals[name] = PhoneOutcome(phone: await device.phone, opened: await device.opened, stored: Set(stored))
        }
        await shutdown()
        let evaluator = CheckEvaluator(
            scenario: scenario, events: timeline.all, finals: finals, ids: ids, read: read, failedSteps: failedSteps)
        var invariants = evaluator.evaluate()
        let (traceCheck, traceResult) = await checkTraces()
        invariants.append(traceResult)
        let events = (timeline.all + evaluator.endEvents(at: scenario.duration)).map { $0.renamed(names) }
        var report = SimulationReport(
            scenario: scenario.name, summary: scenario.summary, seed: scenario.seed, timeScale: scenario.timeScale,
            devices: scenario.devices.map(\.name), duration: scenario.duration, events: events, invariants: invariants)
        report.traces = Dictionary(uniqueKeysWithValues: traceCheck.traces.map { (names[$0.key] ?? $0.key, $0.value) })
        return report
    }

    /// The invariant every run keeps: each posted message's trace agrees with the emulator's
    /// record and the phones' timelines (docs/simulator.md, "Traces"). Read once the phones are
    /// shut down, so nothing more is queued.
    private func checkTraces() async -> (TraceCheck, InvariantResult) {
        var check = TraceCheck(
            messages: names.keys.sorted(), traces: [:], events: timeline.all, accepted: router.accepted, phones: [:],
            reads: reads, names: names)
        let findings: [TraceFinding]
        do {
            findings = try await check.settle { check in
                check.traces = try await server.traces(of: check.messages)
                // After the traces: delivery goes on while they are read, and a push is accepted
                // before its answer is recorded, so this holds every push the traces say was sent.
                check.accepted = router.accepted
                for (name, device) in devices { check.phones[name] = try await device.receipts(of: check.messages) }
            }
        } catch {
            return (check, InvariantResult(name: "trace", description: Self.traceInvariant, passed: false, detail: "\(error)"))
        }
        let shown = check.shownStatuses().values.flatMap(\.values)
        let counts = ShownStatus.allCases.compactMap { status -> String? in
            let count = shown.filter { $0 == status }.count
            return count == 0 ? nil : "\(status.rawValue) \(count)"
        }
        let detail =
            findings.isEmpty
            ? "\(check.messages.count) message(s); shown: \(counts.isEmpty ? "none" : counts.joined(separator: ", "))"
            : findings.map(\.description).joined(separator: "; ")
        return (check, InvariantResult(name: "trace", description: Self.traceInvariant, passed: findings.isEmpty, detail: detail))
    }

    static let traceInvariant =
        "each message's trace agrees with the APNs emulator and the phones' timelines (a receipt not yet sent excepted)"
}

/// A phone as the run left it.
struct PhoneOutcome {
    var phone: SimulatedPhone
    var opened: [String]
    var stored: Set<String>
}
