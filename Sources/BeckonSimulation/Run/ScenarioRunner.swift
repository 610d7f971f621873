import APNSCore
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
        guard let emulator = server.emulator else {
            await server.stop()
            throw SimulationError("the node has no built-in APNs emulator")
        }
        // Registered first, so the clock starts when every phone is ready: under load,
        // registration takes a while, and time zero is the script's first moment.
        var registered: [(device: ScenarioDevice, credential: String, tokens: [String])] = []
        do {
            for device in scenario.devices {
                let remote = APNSDeviceToken.random()
                let voip = device.app.voip ? APNSDeviceToken.random() : nil
                try emulator.registerDevice(token: remote, bundleID: SimulationServer.bundleID, kind: .app, environment: .sandbox)
                if let voip { try emulator.registerDevice(token: voip, bundleID: SimulationServer.bundleID, kind: .voip, environment: .sandbox) }
                let credential = try await server.registerDevice(
                    id: device.name, user: device.user, traits: device.app, remoteToken: remote, voipToken: voip)
                registered.append((device, credential, [remote] + (voip.map { [$0] } ?? [])))
            }
        } catch {
            await server.stop()
            throw error
        }
        let timeline = Timeline(clock: ScaledClock(scale: scenario.timeScale))
        let router = PushRouter(timeline: timeline)
        emulator.observeDevices { router.route($0) }
        var run = Run(scenario: scenario, server: server, timeline: timeline)
        for (index, (device, credential, tokens)) in registered.enumerated() {
            let phone = SimulatedDevice(
                configuration: DeviceConfiguration(
                    name: device.name, traits: device.app, policy: device.ios, seed: scenario.seed &+ UInt64(index),
                    syncURL: server.syncURL, baseURL: server.baseURL, credential: credential,
                    storePath: server.directory.appendingPathComponent("\(device.name).sqlite").path),
                timeline: timeline,
                setAPNsOnline: { online in for token in tokens { try? emulator.setDeviceOnline(token: token, online) } })
            router.add(phone, tokens: tokens)
            run.devices[device.name] = phone
        }
        do {
            for step in scenario.steps.sorted(by: { $0.at < $1.at }) {
                try await timeline.clock.sleep(untilElapsed: step.at)
                await run.play(step)
            }
            try await timeline.clock.sleep(untilElapsed: scenario.duration)
        } catch {
            await run.shutdown()
            emulator.observeDevices(nil)
            await server.stop()
            throw error
        }
        let report = await run.finish()
        emulator.observeDevices(nil)
        await server.stop()
        return report
    }
}

extension APNSDeviceToken {
    /// A fresh 32-byte token, as lowercase hex.
    static func random() -> String {
        (0..<32).map { _ in String(format: "%02x", UInt8.random(in: 0...255)) }.joined()
    }
}
