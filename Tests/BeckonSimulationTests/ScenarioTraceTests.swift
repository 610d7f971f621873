import BeckonDelivery
import DeviceSimulator
import Testing

@testable import BeckonSimulation

/// Each built-in scenario against a real node: every posted message's trace (docs/trace.md)
/// agrees with what the APNs emulator accepted and what each phone's timeline shows.
@Suite(.serialized) struct ScenarioTraceTests {
    /// Whether the scenario's own checks hold on a loaded machine is scripts/simulate.sh's
    /// business (a window missed under load changes what happens); the trace must agree with
    /// whatever did happen.
    @Test(arguments: BuiltInScenarios.all.map(\.name))
    func theTraceOfEachMessageAgreesWithTheTimeline(name: String) async throws {
        let scenario = try #require(BuiltInScenarios.named(name))
        let report = try await ScenarioRunner.run(scenario)
        let trace = try #require(report.invariants.first { $0.name == "trace" })
        #expect(trace.passed, "\(trace.detail)")
        let posted = report.events.compactMap { event -> String? in
            if case .messagePosted(let name) = event.what { return name }
            return nil
        }
        #expect(Set(report.traces.keys) == Set(posted), "a trace for every posted message")
    }

    /// Issue 40's "done when": the wake dropped, the reconnect window, the escalation, the alert
    /// shown and the tap, in that order, in the trace of a message to a force-quit phone.
    @Test func theTraceOfAMessageToAForceQuitPhone() async throws {
        var scenario = try #require(BuiltInScenarios.named("killed"))
        // Slower than its ×50: the alert must be on screen before the tap at 150 s.
        scenario.timeScale = 20
        let report = try await ScenarioRunner.run(scenario)
        let events = try #require(report.traces["m1"]?.devices.first { $0.deviceId == "phone" }?.events)
        let types = events.map(\.type.rawValue).joined(separator: ", ")

        let wake = try #require(events.firstIndex { $0.type == .push && $0.reason == "wake" }, "no wake push: \(types)")
        #expect(events[wake].pushType == "background")
        let wakeSent = try #require(
            events[wake...].firstIndex { $0.type == .apns && $0.pushId == events[wake].pushId && $0.outcome == "sent" },
            "the wake was not sent: \(types)")
        let missed = try #require(
            events[wakeSent...].firstIndex { $0.type == .wakeMissed && $0.pushId == events[wake].pushId },
            "no missed wake after it: \(types)")
        let alert = try #require(
            events[missed...].firstIndex { $0.type == .push && $0.reason == "unreachable-alert" }, "no escalation: \(types)")
        #expect(events[alert].pushType == "alert")
        let alertSent = try #require(
            events[alert...].firstIndex { $0.type == .apns && $0.pushId == events[alert].pushId && $0.outcome == "sent" },
            "the alert was not sent: \(types)")
        let shown = try #require(events[alertSent...].firstIndex { $0.type == .shown }, "not shown after the alert: \(types)")
        #expect(events[shown...].contains { $0.type == .opened }, "not opened after it was shown: \(types)")

        // The same pushes as the emulator's and the phone's: iOS dropped the wake, showed the alert.
        let discarded = report.events.compactMap { event -> String? in
            guard event.device == "phone", case .pushDiscarded(let push, "force-quit") = event.what else { return nil }
            return push.lowercased()
        }
        #expect(discarded.contains(events[wake].apnsId?.lowercased() ?? "-"))
        let shownPushes = report.events.compactMap { event -> String? in
            guard event.device == "phone", case .pushDelivered(let push, "alert") = event.what else { return nil }
            return push.lowercased()
        }
        #expect(shownPushes.contains(events[alert].apnsId?.lowercased() ?? "-"))
        #expect(report.invariants.first { $0.name == "trace" }?.passed == true)
    }
}
