import Testing

@testable import BeckonSimulation

/// A small fleet against a real node: its shown figure comes from the server's receipts, and
/// every shown message the receipts lack is accounted for.
@Suite(.serialized) struct FleetRunTests {
    @Test func aFleetsShownFigureComesFromReceiptsAndAgreesWithItsTimelines() async throws {
        // Killed phones never bring their app to the front: what iOS shows them is never told.
        let mix = try FleetMix(parsing: "killed=0.25,extension=0.25")
        let report = try await FleetRunner.run(
            FleetConfiguration(devices: 16, mix: mix, messages: 16, duration: 200, timeScale: 10, seed: 3))
        let figures = report.figures
        #expect(figures.traceFindings.isEmpty, "\(figures.traceFindings)")
        #expect(figures.all.shownDisagreeing == 0)
        for (behaviour, counts) in figures.byBehaviour {
            // Every message shown on a timeline is reported, on its way, or declined in front.
            let accounted = counts.shown - counts.shownDeclinedInFront + counts.shownQueued + counts.shownAwaitingApp
            #expect(accounted == counts.shownOnTimeline, "\(behaviour): \(counts)")
        }
        if let killed = figures.byBehaviour[.killed] {
            #expect(killed.shownQueued == 0 && killed.shown == 0, "a force-quit app never runs to report: \(killed)")
            #expect(killed.shownAwaitingApp == killed.shownOnTimeline)
        }
        #expect(report.json["shown"] == .int(figures.shown))
        #expect(report.json["shownOnTimeline"] == .int(figures.shownOnTimeline))
    }
}
