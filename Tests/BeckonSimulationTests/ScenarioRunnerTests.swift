import DeviceSimulator
import Testing

@testable import BeckonSimulation

/// A scenario against a real node (SQLite, the built-in emulator, WebSockets on loopback).
@Suite(.serialized) struct ScenarioRunnerTests {
    @Test func theExampleScenarioRunsAndItsMessageIsNamedInTheReport() async throws {
        var scenario = try Scenario(file: ScenarioFileTests.example)
        // Much slower than the file's ×50 (×10 once missed its wake window with the whole suite
        // running): the other suites load the machine while this one runs.
        // Whether every check holds is scripts/simulate.sh's business (it runs alone, and says
        // so when a loaded machine missed a window); here: the run, its names, its store.
        scenario.timeScale = 5
        let report = try await ScenarioRunner.run(scenario)
        #expect(report.events.contains { $0.device == "phone" && $0.what == .messageStored(id: "m1") })
        #expect(report.events.contains { $0.device == "server" && $0.what == .messagePosted(id: "m1") })
        #expect(report.invariants.first { $0.name == "stored phone" }?.passed == true)
        #expect(report.invariants.first { $0.name == "steps" }?.passed == true)
    }

    @Test func aCheckThatDoesNotHoldFailsTheRun() async throws {
        // Offline the whole time: the message cannot reach the phone's store.
        let scenario = Scenario(
            name: "unreachable", summary: "", devices: [ScenarioDevice("phone", user: "alice")],
            steps: [
                .user("phone", .launch, at: 1), .user("phone", .home, at: 2), .user("phone", .goOffline, at: 3),
                .post("m1", to: ["alice"], text: "hi", at: 5),
            ],
            duration: 20, checks: [.stored(device: "phone", messages: ["m1"])])
        let report = try await ScenarioRunner.run(scenario)
        #expect(!report.passed)
        #expect(report.invariants.first { $0.name == "stored phone" }?.detail == "missing: m1")
    }
}
