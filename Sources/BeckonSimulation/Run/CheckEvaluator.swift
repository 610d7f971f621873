import BeckonJSON
import DeviceSimulator

/// Decides the invariants of a finished run: the scenario's own checks, and the ones every run
/// must hold — each step played, and no iOS policy violation the scenario did not provoke on
/// purpose, counting a notification left on screen for a message read elsewhere (rule 7).
struct CheckEvaluator {
    let scenario: Scenario
    let events: [TimelineEvent]
    let finals: [String: PhoneOutcome]
    let ids: [String: String]
    let read: Set<String>
    let failedSteps: [String]

    func evaluate() -> [InvariantResult] {
        var results = scenario.checks.map(check)
        results.append(
            InvariantResult(
                name: "steps", description: "every step of the script was played", passed: failedSteps.isEmpty,
                detail: failedSteps.isEmpty ? "\(scenario.steps.count) steps" : failedSteps.joined(separator: "; ")))
        let violations = (events + endEvents(at: scenario.duration)).compactMap { event -> String? in
            guard case .violation(let kind, let detail) = event.what, !scenario.allowedViolations.contains(kind) else {
                return nil
            }
            return "\(event.device): \(kind.rawValue) (\(detail))"
        }
        results.append(
            InvariantResult(
                name: "ios-policy", description: "no iOS policy violation the scenario did not provoke on purpose",
                passed: violations.isEmpty, detail: violations.isEmpty ? "none" : violations.joined(separator: "; ")))
        return results
    }

    /// Violations only visible at the end: notifications still on screen for messages read on
    /// another device.
    func endEvents(at time: Double) -> [TimelineEvent] {
        finals.keys.sorted().flatMap { name -> [TimelineEvent] in
            finals[name]!.phone.notifications.compactMap { shown in
                guard !shown.messages.isEmpty, shown.messages.allSatisfy(read.contains) else { return nil }
                return TimelineEvent(
                    time: time, device: name,
                    what: .violation(
                        .leftAfterRead,
                        detail: "notification \(shown.identifier) shows \(shown.messages.joined(separator: ", ")), already read"))
            }
        }
    }

    private func resolve(_ names: [String]) -> [String] { names.map { ids[$0] ?? $0 } }

    private func check(_ check: ScenarioCheck) -> InvariantResult {
        switch check {
        case .stored(let device, let messages):
            let missing = messages.filter { !(finals[device]?.stored.contains(ids[$0] ?? $0) ?? false) }
            return result(
                "stored", device, messages, "in the phone's store at the end", missing.isEmpty,
                missing.isEmpty ? "all stored" : "missing: \(missing.joined(separator: ", "))")
        case .notified(let device, let messages):
            let missing = messages.filter { !wasShown(ids[$0] ?? $0, on: device) }
            return result(
                "notified", device, messages, "shown in a notification", missing.isEmpty,
                missing.isEmpty ? "all shown" : "never shown: \(missing.joined(separator: ", "))")
        case .notNotified(let device, let messages):
            let shown = messages.filter { wasShown(ids[$0] ?? $0, on: device) }
            return result(
                "not-notified", device, messages, "never shown in a notification", shown.isEmpty,
                shown.isEmpty ? "none shown" : "shown: \(shown.joined(separator: ", "))")
        case .showing(let device, let messages, let time):
            let onScreen = showing(on: device, at: time)
            let expected = Set(resolve(messages))
            let when = time.map { "at \($0) s" } ?? "at the end"
            return result(
                "showing", device, messages, "exactly these on screen \(when)", onScreen == expected,
                "on screen: \(label(onScreen))")
        case .opened(let device, let messages):
            let opened = (finals[device]?.opened ?? []).sorted()
            return result(
                "opened", device, messages, "opened once each after a tap, nothing else",
                opened == resolve(messages).sorted(), "opened: \(label(opened))")
        case .events(let device, let kind, let fields, let min, let max):
            let count = events.filter { $0.device == device && $0.what.kind == kind && matches($0, fields) }.count
            let bounds = max.map { $0 == min ? "exactly \(min)" : "\(min)…\($0)" } ?? "at least \(min)"
            let filter =
                fields.isEmpty
                ? "" : " with " + fields.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: ", ")
            return InvariantResult(
                name: "events \(device) \(kind)", description: "\(bounds) \(kind) event(s)\(filter) on \(device)",
                passed: count >= min && count <= (max ?? Int.max), detail: "\(count) found")
        }
    }

    private func result(
        _ name: String, _ device: String, _ messages: [String], _ what: String, _ passed: Bool, _ detail: String
    ) -> InvariantResult {
        let subject = messages.isEmpty ? "no message" : messages.joined(separator: ", ")
        return InvariantResult(
            name: "\(name) \(device)", description: "\(subject) \(what) on \(device)",
            passed: passed, detail: detail)
    }

    /// The messages on screen, replayed from the timeline (at the end: the phone's own state).
    private func showing(on device: String, at time: Double?) -> Set<String> {
        guard let time else {
            return Set(
                (finals[device]?.phone.notifications ?? []).flatMap { $0.messages.isEmpty ? [$0.identifier] : $0.messages })
        }
        var screen: [String: [String]] = [:]
        for event in events where event.device == device && event.time <= time {
            switch event.what {
            case .notificationShown(let identifier, let messages, _):
                screen[identifier] = messages.isEmpty ? [identifier] : messages
            case .notificationRemoved(let identifier, _): screen[identifier] = nil
            default: break
            }
        }
        return Set(screen.values.flatMap { $0 })
    }

    private func wasShown(_ id: String, on device: String) -> Bool {
        events.contains { event in
            guard event.device == device, case .notificationShown(let identifier, let messages, _) = event.what else {
                return false
            }
            return identifier == id || messages.contains(id)
        }
    }

    private func matches(_ event: TimelineEvent, _ fields: [String: String]) -> Bool {
        let values = event.what.fields
        return fields.allSatisfy { key, expected in
            let wanted = ids[expected] ?? expected
            switch values[key] {
            case .string(let text)?: return text == wanted
            case .int(let number)?: return String(number) == wanted
            case .bool(let flag)?: return String(flag) == wanted
            case .array(let items)?: return items.contains(.string(wanted))
            default: return false
            }
        }
    }

    private func label(_ ids: some Sequence<String>) -> String {
        let names = Dictionary(self.ids.map { ($1, $0) }, uniquingKeysWith: { first, _ in first })
        let labels = ids.map { names[$0] ?? $0 }.sorted()
        return labels.isEmpty ? "nothing" : labels.joined(separator: ", ")
    }
}
