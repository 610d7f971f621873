import DeviceSimulator
import Foundation
import Testing

@testable import BeckonSimulation

@Suite struct TimelineSVGTests {
    let svg = TimelineSVG.render(SampleReport.report)

    @Test func isWellFormedSVG() throws {
        let parsed = try #require(ParsedSVG.parse(svg), "the timeline is not well-formed XML")
        #expect(parsed.root?.name == "svg")
        #expect(parsed.root?.attributes["xmlns"] == "http://www.w3.org/2000/svg")
        #expect(parsed.root?.attributes["font-family"] == "sans-serif")
        #expect(!svg.contains("<script"), "no scripts, and no unescaped markup from event text")
        #expect(!svg.contains("href"), "nothing external")
    }

    @Test func titleShowsScenarioAndVerdict() throws {
        let parsed = try #require(ParsedSVG.parse(svg))
        let title = try #require(parsed.texts.first { $0.contains("offline-then-read-elsewhere") })
        #expect(title.contains("Alice is offline"))
        #expect(parsed.texts.contains("FAIL"), "one invariant failed")
        #expect(parsed.texts.contains { $0.contains("read-clears") }, "the failed invariant is named")
    }

    @Test func everyDeviceHasALaneInOrder() throws {
        let parsed = try #require(ParsedSVG.parse(svg))
        let lanes = parsed.elements("text", classes: "lane-name").map(\.text)
        #expect(lanes == [TimelineEvent.server, SampleReport.alice, SampleReport.bob])
    }

    @Test func oneRectPerAppStateSpan() throws {
        let parsed = try #require(ParsedSVG.parse(svg))
        let spans = SampleReport.stateSpans
        #expect(parsed.elements("rect", classes: "state").count == spans.values.reduce(0, +))
        for state in AppState.allCases {
            #expect(parsed.elements("rect", classes: "state \(state.rawValue)").count == spans[state, default: 0], "\(state)")
        }
        // The string a user would search for, too.
        #expect(svg.components(separatedBy: "class=\"state foreground\"").count - 1 == spans[.foreground])
    }

    @Test func pushStagesAreMarked() throws {
        let parsed = try #require(ParsedSVG.parse(svg))
        // p-a1: sent → accepted → held by APNs → delivered.
        #expect(parsed.elements("circle", classes: "push sent").count == 8)
        #expect(parsed.elements("circle", classes: "push accepted").count == 7)
        #expect(parsed.elements("rect", classes: "push held").count == 3)
        #expect(parsed.elements("polygon", classes: "push delivered").count == 4)
        #expect(parsed.elements("path", classes: "push discarded").count == 3)
        #expect(parsed.elements("path", classes: "push rejected").count == 1)
        #expect(parsed.texts.contains("APNs"))
        #expect(parsed.texts.contains("replaced"), "a discarded push says why")
        #expect(parsed.texts.contains { $0.hasPrefix("410") }, "a rejected push shows its status")
        #expect(parsed.texts.contains("new-message"), "a push is labelled with its reason")
    }

    @Test func notificationsAreBarsWithEscapedText() throws {
        let parsed = try #require(ParsedSVG.parse(svg))
        #expect(parsed.elements("rect", classes: "notification").count == 3)
        #expect(svg.contains("&lt;script&gt;"))
        // The label is the text, cut to fit; the parser gives back the characters as written.
        #expect(parsed.texts.contains { $0.hasPrefix("Bob: <script>") && $0.hasSuffix("…") })
        #expect(parsed.texts.contains("read-elsewhere"), "why it was removed")
        #expect(parsed.elements("circle", classes: "badge").count == 4)
    }

    @Test func syncSessionsAndStoredMessages() throws {
        let parsed = try #require(ParsedSVG.parse(svg))
        #expect(parsed.elements("rect", classes: "sync app").count == 4)
        #expect(parsed.elements("rect", classes: "sync extension").count == 1)
        #expect(parsed.texts.contains("1001"), "a close code ends its bar")
        #expect(parsed.elements("line", classes: "stored").count == 5)
        #expect(parsed.texts.contains("7f3a02"), "stored messages are labelled by their short id")
    }

    @Test func eventsAndViolationsAreMarked() throws {
        let parsed = try #require(ParsedSVG.parse(svg))
        #expect(parsed.elements("polygon", classes: "mark violation").count == 1)
        #expect(parsed.texts.contains("! left-after-read"))
        #expect(parsed.texts.contains("killed: force-quit"))
        #expect(parsed.texts.contains("swipe-away"))
        #expect(parsed.elements("polygon", classes: "posted").count == 3)
    }

    @Test func legendListsTheStatesUsed() throws {
        let parsed = try #require(ParsedSVG.parse(svg))
        #expect(parsed.elements("rect", classes: "swatch").count == SampleReport.stateSpans.count)
    }

    @Test func sameReportSameBytes() {
        #expect(TimelineSVG.render(SampleReport.report) == svg)
    }

    @Test func emptyReportStillDraws() throws {
        let report = SimulationReport(
            scenario: "empty", summary: "Nothing happens.", seed: 1, timeScale: 1, devices: ["phone"], duration: 0, events: [],
            invariants: [])
        let parsed = try #require(ParsedSVG.parse(TimelineSVG.render(report)))
        #expect(parsed.texts.contains("phone"))
        #expect(parsed.texts.contains("PASS"))
    }

    @Test func ticksAreOneTwoOrFiveTimesAPowerOfTen() {
        #expect(TimeScale(end: 120, left: 0, width: 1000).step == 20)
        #expect(TimeScale(end: 120, left: 0, width: 1000).ticks.last == 120)
        #expect(TimeScale(end: 3, left: 0, width: 1000).step == 0.5)
        #expect(TimeScale(end: 3, left: 0, width: 1000).label(1.5) == "1.5s")
        #expect(TimeScale(end: 4000, left: 0, width: 1000).step == 500)
    }

    /// Not a check: leaves the sample where a person can open it (`beckon-timeline-sample.svg` and
    /// `beckon-report-sample.json` in the temporary directory).
    @Test func writesTheSampleForPeopleToLookAt() throws {
        let directory = FileManager.default.temporaryDirectory
        try Data(svg.utf8).write(to: directory.appendingPathComponent("beckon-timeline-sample.svg"))
        try SampleReport.report.write(to: directory.appendingPathComponent("beckon-report-sample.json").path)
    }
}

@Suite struct BusyTimelineTests {
    let svg = TimelineSVG.render(BusyReport.report)

    @Test func crowdedRunStaysWellFormedAndBounded() throws {
        let parsed = try #require(ParsedSVG.parse(svg))
        #expect(parsed.elements("rect", classes: "state").count == 120)
        // Stacked rows are capped, so a crowded lane grows, but not without bound.
        let height = try #require(parsed.root?.attributes["height"].flatMap(Double.init))
        #expect(height < 3000)
        #expect(svg.utf8.count < 600_000, "about a few hundred bytes per event")
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("beckon-timeline-busy.svg")
        try Data(svg.utf8).write(to: path)
    }
}
