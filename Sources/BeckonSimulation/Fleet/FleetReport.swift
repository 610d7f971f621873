import BeckonJSON
import DeviceSimulator
import Foundation

/// A fleet run's configuration and figures, as text for a person and JSON for a file.
public struct FleetReport: Sendable {
    public var configuration: FleetConfiguration
    public var figures: FleetFigures
    /// Wall-clock seconds the run took.
    public var realSeconds: Double
    /// Every event of the run, for a closer look (`--events`).
    public var events: [TimelineEvent]

    public var json: JSONValue {
        func round(_ value: Double?, _ places: Double = 1000) -> JSONValue {
            value.map { .double(($0 * places).rounded() / places) } ?? .null
        }
        let figures = self.figures
        return [
            "devices": .int(configuration.devices), "mix": .string(configuration.mix.description),
            "strategy": .string(configuration.strategy.rawValue), "messages": .int(figures.messages),
            "durationSeconds": .double(configuration.duration), "timeScale": .double(configuration.timeScale),
            "seed": .int(Int(truncatingIfNeeded: configuration.seed)), "realSeconds": round(realSeconds, 10),
            "stored": .int(figures.stored), "storedFraction": round(figures.storedFraction, 10_000),
            "shown": .int(figures.shown), "shownFraction": round(figures.shownFraction, 10_000),
            "shownOnTimeline": .int(figures.shownOnTimeline),
            "shownOnTimelineFraction": round(figures.shownOnTimelineFraction, 10_000),
            "shownNotYetReported": .int(figures.all.shownQueued + figures.all.shownAwaitingApp),
            "shownQueuedOnPhone": .int(figures.all.shownQueued), "shownAwaitingApp": .int(figures.all.shownAwaitingApp),
            "shownDisagreeing": .int(figures.all.shownDisagreeing),
            "shownDeclinedInFront": .int(figures.all.shownDeclinedInFront),
            "traceFindings": .int(figures.traceFindings.count),
            "traceFindingExamples": .array(figures.traceFindings.prefix(10).map(JSONValue.string)),
            "reached": .int(figures.reached), "reachedFraction": round(figures.reachedFraction, 10_000),
            "reachedWithin120Seconds": .int(figures.all.reachedPromptly),
            "reachedWithin120SecondsFraction": round(figures.promptFraction, 10_000),
            "latencyP50Seconds": round(figures.latencyP50), "latencyP99Seconds": round(figures.latencyP99),
            "pushesSent": .int(figures.pushesSent), "pushesPerReachedMessage": round(figures.pushesPerReached),
            "pushesByReason": .object(figures.pushesByReason.mapValues { .int($0) }),
            "backgroundPushesSent": .int(figures.backgroundSent), "backgroundPushesRun": .int(figures.backgroundRun),
            "wakeSuccess": round(figures.wakeSuccess, 10_000),
            "violations": .object(figures.violations.mapValues { .int($0) }),
            "byBehaviour": .object(
                Dictionary(
                    uniqueKeysWithValues: figures.byBehaviour.map { behaviour, counts in (behaviour.rawValue, counts.json) })),
        ]
    }

    /// The figures as a person reads them.
    public var text: String {
        let f = figures
        func seconds(_ value: Double?) -> String { value.map { String(format: "%.1f s", $0) } ?? "n/a" }
        var lines = [
            "fleet: \(configuration.devices) phones, strategy \(configuration.strategy.rawValue), \(f.messages) messages, \(Int(configuration.duration)) s at ×\(Int(configuration.timeScale)) (\(String(format: "%.0f", realSeconds)) s real)",
            "stored:            \(f.stored)/\(f.messages) = \(String(format: "%.2f%%", f.storedFraction * 100))",
            "shown (receipts):  \(f.shown)/\(f.messages) = \(String(format: "%.2f%%", f.shownFraction * 100)); on the timelines \(f.shownOnTimeline) = \(String(format: "%.2f%%", f.shownOnTimelineFraction * 100))",
            "  not yet reported: \(f.all.shownQueued + f.all.shownAwaitingApp) (\(f.all.shownQueued) queued on the phone, \(f.all.shownAwaitingApp) shown by iOS with the app not in front since); disagreeing: \(f.all.shownDisagreeing)",
            "trace findings:    " + (f.traceFindings.isEmpty ? "none" : "\(f.traceFindings.count), e.g. \(f.traceFindings[0])"),
            "reached the user:  \(f.reached)/\(f.messages) = \(String(format: "%.2f%%", f.reachedFraction * 100)) (shown, or synced in front); within 2 min: \(String(format: "%.2f%%", f.promptFraction * 100))",
            "time to device:    p50 \(seconds(f.latencyP50)), p99 \(seconds(f.latencyP99))",
            "pushes:            \(f.pushesSent) (\(String(format: "%.2f", f.pushesPerReached)) per reached message); "
                + f.pushesByReason.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: ", "),
            "wake success:      \(f.backgroundRun)/\(f.backgroundSent) background pushes ran the app = \(String(format: "%.1f%%", f.wakeSuccess * 100))",
            "iOS violations:    "
                + (f.violations.isEmpty
                    ? "none" : f.violations.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: ", ")),
        ]
        for behaviour in FleetBehaviour.allCases {
            guard let counts = f.byBehaviour[behaviour], counts.messages > 0 else { continue }
            func share(_ count: Int) -> String { String(format: "%.1f%%", Double(count) / Double(counts.messages) * 100) }
            lines.append(
                "  \(behaviour.rawValue.padding(toLength: 12, withPad: " ", startingAt: 0)) \(counts.reached)/\(counts.messages) reached (\(share(counts.reached)), within 2 min \(share(counts.reachedPromptly))), stored \(share(counts.stored)), shown \(share(counts.shown)) (timeline \(share(counts.shownOnTimeline)), not yet reported \(counts.shownQueued + counts.shownAwaitingApp), disagreeing \(counts.shownDisagreeing))"
            )
        }
        return lines.joined(separator: "\n")
    }

    public func write(to path: String) throws {
        try Data(json.bytes).write(to: URL(fileURLWithPath: path), options: .atomic)
    }

    /// Every event, one JSON object a line.
    public func writeEvents(to path: String) throws {
        var lines = Data()
        for event in events {
            lines.append(contentsOf: event.json.bytes)
            lines.append(0x0A)
        }
        try lines.write(to: URL(fileURLWithPath: path), options: .atomic)
    }
}
