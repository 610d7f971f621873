import BeckonClient
import DeviceSimulator
import Foundation
import Logging

/// Plays a scenario: starts a server, registers the phones through the API, plays the steps at
/// their virtual times, waits out the duration, then checks the invariants.
public enum ScenarioRunner {
    public static func run(_ scenario: Scenario, logLevel: Logger.Level = .error) async throws -> SimulationReport {
        var policy = scenario.delivery
        policy.strategy = scenario.strategy
        let server = try await SimulationServer.start(policy: policy, timeScale: scenario.timeScale, logLevel: logLevel)
        // Registered first, so the clock starts when every phone is ready: under load,
        // registration takes a while, and time zero is the script's first moment.
        var registered: [SimulationServer.RegisteredPhone] = []
        do {
            for device in scenario.devices {
                registered.append(try await server.registerPhone(device.name, user: device.user, traits: device.app))
            }
        } catch {
            await server.stop()
            throw error
        }
        let timeline = Timeline(clock: ScaledClock(scale: scenario.timeScale))
        let router = PushRouter(timeline: timeline)
        server.emulator.observeDevices { router.route($0) }
        var run = Run(scenario: scenario, server: server, timeline: timeline, router: router)
        for (index, (device, phone)) in zip(scenario.devices, registered).enumerated() {
            run.devices[device.name] = server.makeDevice(
                device.name, phone: phone, traits: device.app, policy: device.ios, seed: scenario.seed &+ UInt64(index),
                timeline: timeline, router: router)
        }
        do {
            for step in scenario.steps.sorted(by: { $0.at < $1.at }) {
                try await timeline.clock.sleep(untilElapsed: step.at)
                await run.play(step)
            }
            try await timeline.clock.sleep(untilElapsed: scenario.duration)
        } catch {
            await run.shutdown()
            server.emulator.observeDevices(nil)
            await server.stop()
            throw error
        }
        let report = await run.finish()
        server.emulator.observeDevices(nil)
        await server.stop()
        return report
    }
}
