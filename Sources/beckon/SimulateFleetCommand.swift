import ArgumentParser
import BeckonProtocol
import BeckonSimulation
import Foundation
import Logging

/// `beckon simulate fleet`: N simulated phones with a mix of behaviours, M messages, one
/// strategy; reports whether every message reached its user (BENCHMARKS.md, "Fleet").
struct SimulateFleetCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "fleet",
        abstract: "Measure a fleet of simulated iPhones: messages reaching the user, latency, pushes, wakes, iOS violations.")

    @Option(help: "How many phones.")
    var devices: Int = 1000

    @Option(
        help:
            "Behaviour shares, NAME=FRACTION,... (the rest is background). Names: \(FleetBehaviour.allCases.map(\.rawValue).joined(separator: ", "))."
    )
    var mix: String?

    @Option(help: "The app's delivery strategy: wake, service-extension, filtering or content.")
    var strategy: String = "wake"

    @Option(help: "Messages posted (default: one per phone).")
    var messages: Int?

    @Option(help: "Virtual seconds the run lasts.")
    var duration: Double = 900

    @Option(help: "Virtual seconds per wall-clock second.")
    var timeScale: Double = 10

    @Option(help: "The seed of every random choice.")
    var seed: UInt64 = 1

    @Option(help: "Write the figures as JSON to this file.")
    var report: String?

    @Option(help: "Write every event, one JSON object a line, to this file.")
    var events: String?

    @Option(help: "Server log level (trace, debug, info, notice, warning, error, critical).")
    var logLevel: String = "error"

    func validate() throws {
        guard devices > 0 else { throw ValidationError("--devices must be positive") }
        guard DeliveryStrategy(rawValue: strategy) != nil else {
            throw ValidationError("--strategy: \"\(strategy)\" is not wake, service-extension, filtering or content")
        }
        guard timeScale >= 1 else { throw ValidationError("--time-scale must be at least 1") }
        if let messages, messages < 0 { throw ValidationError("--messages must not be negative") }
        // Messages go out from 10 s to 60% of the run: shorter runs leave no window.
        guard duration >= 30 else { throw ValidationError("--duration must be at least 30 (virtual seconds)") }
    }

    func run() async throws {
        let parsedMix: FleetMix
        do { parsedMix = try mix.map(FleetMix.init(parsing:)) ?? .standard } catch { throw ValidationError("\(error)") }
        let configuration = FleetConfiguration(
            devices: devices, mix: parsedMix, strategy: DeliveryStrategy(rawValue: strategy)!, messages: messages,
            duration: duration, timeScale: timeScale, seed: seed)
        let level = Logger.Level(rawValue: logLevel) ?? .error
        SimulationLogging.bootstrap(level)
        let outcome = try await FleetRunner.run(configuration, logLevel: level) { print("… \($0)") }
        print(outcome.text)
        if let report { try outcome.write(to: report) }
        if let events { try outcome.writeEvents(to: events) }
    }
}
