import BeckonJSON
import DeviceSimulator
import Foundation
import Testing

@testable import BeckonSimulation

/// Scenario files: what a user writes (docs/simulator.md, "Writing a scenario").
@Suite struct ScenarioFileTests {
    static let example = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("scenarios/lunch.json").path

    @Test func theExampleFileReads() throws {
        let scenario = try Scenario(file: Self.example)
        #expect(scenario.name == "lunch")
        #expect(scenario.seed == 7)
        #expect(scenario.devices.map(\.name) == ["phone", "ipad"])
        #expect(scenario.devices[0].ios.backgroundLaunchesPerHour == 3)
        #expect(scenario.steps.count == 5)
        #expect(scenario.steps[4].action == .read(device: "ipad", messages: ["m1"]))
        #expect(scenario.checks.contains(.showing(device: "phone", messages: ["m1"], at: 50)))
        #expect(
            scenario.checks.contains(
                .events(device: "phone", kind: "push-sent", fields: ["type": "background"], min: 1, max: nil)))
    }

    @Test(arguments: [
        (#"{"name":"x","devices":[{"name":"p"}],"colour":1}"#, "colour: unknown field"),
        (
            #"{"name":"x","devices":[{"name":"p"}],"steps":[{"at":1,"do":"dance","device":"p"}]}"#,
            #"steps[0].do: unknown action "dance""#
        ),
        (
            #"{"name":"x","devices":[{"name":"p"}],"steps":[{"at":1,"do":"launch","device":"q"}]}"#,
            #"steps[0].device: no device named "q""#
        ),
        (#"{"name":"x","devices":[{"name":"p"}],"steps":[{"do":"launch","device":"p"}]}"#, "steps[0].at: is required"),
        (#"{"name":"x","devices":[]}"#, "devices: needs at least one device"),
        (
            #"{"name":"x","devices":[{"name":"p","ios":{"extensionSeconds":"long"}}]}"#,
            "devices[0].ios.extensionSeconds: must be a number"
        ),
        (
            #"{"name":"x","devices":[{"name":"p"}],"checks":[{"check":"seen","device":"p"}]}"#,
            #"checks[0].check: unknown check "seen""#
        ),
        (#"{"name":"x","devices":[{"name":"p"}],"strategy":"psychic"}"#, #"strategy: unknown value "psychic""#),
        (#"{"name":"x","devices":[{"name":"p"}],"seed":-1}"#, "seed: must be a whole number"),
        (#"{"name":"x","devices":[{"name":"p"}],"timeScale":0.5}"#, "timeScale: must be from 1 to 1000"),
        (
            #"{"name":"x","devices":[{"name":"p"}],"checks":[{"check":"stored","device":"q"}]}"#,
            #"checks[0].device: no device named "q""#
        ),
    ])
    func badFilesAreRefusedWithThePathAndTheProblem(json: String, message: String) throws {
        let value = try JSONParser.parse(Array(json.utf8))
        #expect {
            _ = try Scenario(json: value)
        } throws: { error in
            "\(error)".hasPrefix(message)
        }
    }

    @Test func everyBuiltInScenarioHasAUniqueNameAndChecks() {
        let names = BuiltInScenarios.all.map(\.name)
        #expect(Set(names).count == names.count)
        for required in [
            "foreground", "background-wake", "killed", "reboot", "offline", "throttled", "tap-cases", "service-extension",
            "voip-call", "voip-not-reported", "read-elsewhere", "shared-store", "filtering", "repush",
        ] {
            #expect(names.contains(required))
        }
        for scenario in BuiltInScenarios.all {
            #expect(!scenario.checks.isEmpty, "\(scenario.name) checks nothing")
            #expect(scenario.steps.allSatisfy { $0.at < scenario.duration }, "\(scenario.name) has a step after its end")
        }
    }
}
