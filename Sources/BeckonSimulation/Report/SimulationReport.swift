import BeckonDelivery
import BeckonJSON
import DeviceSimulator
import Foundation

/// What one scenario run produced: every event, every invariant's result, and what the timeline
/// needs to draw them.
public struct SimulationReport: Sendable {
    public var scenario: String
    /// One sentence: what the scenario shows.
    public var summary: String
    public var seed: UInt64
    /// Virtual seconds per real second.
    public var timeScale: Double
    /// The simulated devices' names, in the order the timeline draws them.
    public var devices: [String]
    /// Virtual seconds the run lasted.
    public var duration: Double
    public var events: [TimelineEvent]
    public var invariants: [InvariantResult]
    /// Each posted message's trace as the server told it at the end (docs/trace.md), by the
    /// scenario's name for it.
    public var traces: [String: MessageTrace] = [:]

    public init(
        scenario: String, summary: String, seed: UInt64, timeScale: Double, devices: [String], duration: Double,
        events: [TimelineEvent], invariants: [InvariantResult]
    ) {
        self.scenario = scenario
        self.summary = summary
        self.seed = seed
        self.timeScale = timeScale
        self.devices = devices
        self.duration = duration
        self.events = events
        self.invariants = invariants
    }

    /// Every invariant held (a run that checked none passes).
    public var passed: Bool { invariants.allSatisfy(\.passed) }

    /// The seed as the report writes it: a JSON integer when it fits one, else its decimal text,
    /// so a seed above `Int.max` is never rounded or made negative.
    var seedJSON: JSONValue {
        seed <= UInt64(Int.max) ? .int(Int(seed)) : .string(String(seed))
    }

    public var json: JSONValue {
        .object([
            "scenario": .string(scenario),
            "summary": .string(summary),
            "seed": seedJSON,
            "timeScale": .double(timeScale),
            "devices": .array(devices.map(JSONValue.string)),
            "durationSeconds": .double((duration * 1000).rounded() / 1000),
            "passed": .bool(passed),
            "invariants": .array(invariants.map(\.json)),
            "events": .array(events.map(\.json)),
            "traces": .array(traceLines),
        ])
    }

    /// One line per message and device: the trace's events in its order, the message by its
    /// scenario name and the device by its name (as registered).
    var traceLines: [JSONValue] {
        traces.keys.sorted().flatMap { message in
            traces[message]!.devices.map { device -> JSONValue in
                ["message": .string(message), "device": .string(device.deviceId), "events": .array(device.events.map(\.reportJSON))]
            }
        }
    }

    /// The report as JSON text: the top-level members in a fixed order, one per line, and one
    /// invariant or event per line, so a report reads (and diffs) line by line.
    public var jsonText: String {
        func compact(_ value: JSONValue) -> String { String(decoding: value.bytes, as: UTF8.self) }
        func list(_ values: [JSONValue]) -> String {
            values.isEmpty ? "[]" : "[\n" + values.map { "    " + compact($0) }.joined(separator: ",\n") + "\n  ]"
        }
        let members: [(String, String)] = [
            ("scenario", compact(.string(scenario))),
            ("summary", compact(.string(summary))),
            ("seed", compact(seedJSON)),
            ("timeScale", compact(.double(timeScale))),
            ("devices", compact(.array(devices.map(JSONValue.string)))),
            ("durationSeconds", compact(.double((duration * 1000).rounded() / 1000))),
            ("passed", compact(.bool(passed))),
            ("invariants", list(invariants.map(\.json))),
            ("events", list(events.map(\.json))),
            ("traces", list(traceLines)),
        ]
        return "{\n" + members.map { "  " + compact(.string($0.0)) + ": " + $0.1 }.joined(separator: ",\n") + "\n}\n"
    }

    /// Writes `jsonText` to `path`, replacing the file whole (never a half-written report).
    public func write(to path: String) throws {
        try Data(jsonText.utf8).write(to: URL(fileURLWithPath: path), options: .atomic)
    }
}
