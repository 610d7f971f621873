import ArgumentParser
import BeckonJSON
import BeckonSimulation
import Foundation
import Logging

/// `beckon simulate`: simulated iPhones, hosting the real client SDK, against a real server and
/// the built-in APNs emulator (docs/simulator.md): a scenario, or a fleet.
struct SimulateCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "simulate",
        abstract: "Simulated iPhones against a real server: play a scenario, or measure a fleet.",
        subcommands: [SimulateScenarioCommand.self, SimulateFleetCommand.self],
        defaultSubcommand: SimulateScenarioCommand.self)
}

/// `beckon simulate SCENARIO`.
struct SimulateScenarioCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "scenario",
        abstract: "Play a scenario on simulated iPhones against a real server; exit non-zero if an invariant fails.",
        discussion: "SCENARIO is a built-in name (see --list) or a scenario JSON file (docs/simulator.md).")

    @Argument(help: "A built-in scenario's name, or the path of a scenario JSON file.")
    var scenario: String?

    @Flag(help: "List the built-in scenarios.")
    var list = false

    @Option(help: "Write the timeline as SVG to this file.")
    var timeline: String?

    @Option(help: "Write the report (every event, every invariant) as JSON to this file.")
    var report: String?

    @Option(help: "Override the scenario's time scale (virtual seconds per real second).")
    var timeScale: Double?

    @Option(help: "Server log level (trace, debug, info, notice, warning, error, critical).")
    var logLevel: String = "error"

    func run() async throws {
        if list {
            for scenario in BuiltInScenarios.all { print("\(scenario.name)\t\(scenario.summary)") }
            return
        }
        guard let name = scenario else { throw ValidationError("name a scenario (see --list) or a scenario file") }
        var scenario: Scenario
        if let builtIn = BuiltInScenarios.named(name) {
            scenario = builtIn
        } else if FileManager.default.fileExists(atPath: name) {
            do { scenario = try Scenario(file: name) } catch { throw ValidationError("\(name): \(error)") }
        } else {
            throw ValidationError("no built-in scenario or file named \(name) (see --list)")
        }
        if let timeScale {
            guard timeScale >= 1 else { throw ValidationError("--time-scale must be at least 1") }
            scenario.timeScale = timeScale
        }
        let level = Logger.Level(rawValue: logLevel) ?? .error
        SimulationLogging.bootstrap(level)
        let outcome = try await ScenarioRunner.run(scenario, logLevel: level)
        if let report { try outcome.write(to: report) }
        if let timeline { try TimelineSVG.render(outcome).write(toFile: timeline, atomically: true, encoding: .utf8) }
        for invariant in outcome.invariants {
            print("\(invariant.passed ? "pass" : "FAIL")  \(invariant.name): \(invariant.description) — \(invariant.detail)")
        }
        print(
            "\(scenario.name): \(outcome.passed ? "passed" : "FAILED") (\(outcome.events.count) events, \(Int(scenario.duration)) s at ×\(Int(scenario.timeScale)))"
        )
        if !outcome.passed { throw ExitCode(1) }
    }
}
