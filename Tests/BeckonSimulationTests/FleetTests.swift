import DeviceSimulator
import Testing

@testable import BeckonSimulation

/// The fleet's inputs and its figures, without a server.
@Suite struct FleetTests {
    @Test func aMixIsParsedAndItsRestIsBackground() throws {
        let mix = try FleetMix(parsing: "killed=0.25,extension=0.5")
        let phones = mix.assign(100, seed: 1)
        #expect(phones.filter { $0 == .killed }.count == 25)
        #expect(phones.filter { $0 == .serviceExtension }.count == 50)
        #expect(phones.filter { $0 == .background }.count == 25)
        #expect(mix.assign(100, seed: 1) == phones, "the same seed, the same fleet")
    }

    @Test(arguments: [
        ("dancing=0.1", "unknown behaviour \"dancing\""),
        ("killed=2", "is not NAME=FRACTION"),
        ("killed", "is not NAME=FRACTION"),
        ("killed=0.6,offline=0.6", "the fractions add up to more than 1"),
    ])
    func aBadMixIsRefusedWithTheReason(text: String, problem: String) {
        #expect { _ = try FleetMix(parsing: text) } throws: { "\($0)".contains(problem) }
    }

    @Test func aMessageReachesItsUserWhenShownOrSyncedInFront() {
        let posted = [
            FleetFigures.Posted(id: "m1", device: "p1", behaviour: .background, at: 10),
            FleetFigures.Posted(id: "m2", device: "p2", behaviour: .killed, at: 10),
            FleetFigures.Posted(id: "m3", device: "p3", behaviour: .offline, at: 10),
            FleetFigures.Posted(id: "m4", device: "p4", behaviour: .foreground, at: 10),
        ]
        let events: [TimelineEvent] = [
            // Woken in the background and stored, never shown: stored, not reached.
            TimelineEvent(time: 11, device: "p1", what: .pushSent(push: "a", type: "background", priority: 5, reason: "wake")),
            TimelineEvent(time: 11, device: "p1", what: .pushDelivered(push: "a", type: "background")),
            TimelineEvent(time: 12, device: "p1", what: .messageStored(id: "m1")),
            // Shown by an alert: reached then, stored later.
            TimelineEvent(time: 15, device: "p2", what: .pushSent(push: "b", type: "alert", priority: 10, reason: "unreachable-alert")),
            TimelineEvent(time: 16, device: "p2", what: .notificationShown(identifier: "m2", messages: ["m2"], text: "")),
            TimelineEvent(time: 30, device: "p2", what: .messageStored(id: "m2")),
            // Stored on another phone: not this message's user.
            TimelineEvent(time: 13, device: "p1", what: .messageStored(id: "m3")),
            TimelineEvent(time: 14, device: "p3", what: .violation(.shownTwice, detail: "")),
            // Synced with the app in front: the app shows it.
            TimelineEvent(time: 1, device: "p4", what: .appState(.foreground)),
            TimelineEvent(time: 200, device: "p4", what: .messageStored(id: "m4")),
        ]
        let figures = FleetFigures(posted: posted, events: events, shown: ["m2": ["p2": .reported]])
        #expect(figures.stored == 3 && figures.shown == 1 && figures.shownOnTimeline == 1)
        #expect(figures.reached == 2)
        #expect(figures.all.reachedPromptly == 1, "m4 reached after 190 s")
        #expect(figures.latencyP50 == 6 && figures.latencyP99 == 190)
        #expect(figures.pushesSent == 2 && figures.pushesByReason == ["wake": 1, "unreachable-alert": 1])
        #expect(figures.wakeSuccess == 1)
        #expect(figures.violations == ["shown-twice": 1])
        #expect(figures.byBehaviour[.background] == FleetFigures.Counts(messages: 1, stored: 1, shown: 0, reached: 0))
        #expect(figures.byBehaviour[.offline]?.reached == 0)
    }

    @Test func shownComesFromReceiptsAndTheTimelineAccountsForTheRest() {
        let posted = ["m1", "m2", "m3", "m4", "m5"].enumerated().map { index, id in
            FleetFigures.Posted(id: id, device: "p\(index + 1)", behaviour: index < 3 ? .killed : .background, at: 10)
        }
        let events = (1...4).map { index in
            TimelineEvent(time: 20, device: "p\(index)", what: .notificationShown(identifier: "m\(index)", messages: ["m\(index)"], text: ""))
        }
        let statuses: [String: [String: ShownStatus]] = [
            "m1": ["p1": .reported], "m2": ["p2": .awaitingApp], "m3": ["p3": .queued], "m4": ["p4": .lost],
            "m5": ["p5": .unfounded],
        ]
        let figures = FleetFigures(posted: posted, events: events, shown: statuses)
        #expect(figures.shown == 1, "only a receipt counts as shown")
        #expect(figures.shownOnTimeline == 4)
        #expect(figures.byBehaviour[.killed] == FleetFigures.Counts(
            messages: 3, stored: 0, shown: 1, shownOnTimeline: 3, shownQueued: 1, shownAwaitingApp: 1, shownDisagreeing: 0,
            reached: 3, reachedPromptly: 3))
        #expect(figures.byBehaviour[.background]?.shownDisagreeing == 2, "shown and never reported; reported and never shown")
        let report = FleetReport(
            configuration: FleetConfiguration(devices: 5), figures: figures, realSeconds: 1, events: events)
        #expect(report.json["shown"] == .int(1) && report.json["shownOnTimeline"] == .int(4))
        #expect(report.json["shownNotYetReported"] == .int(2) && report.json["shownDisagreeing"] == .int(2))
        #expect(report.text.contains("not yet reported: 2 (1 queued on the phone, 1 shown by iOS"))
    }
}
