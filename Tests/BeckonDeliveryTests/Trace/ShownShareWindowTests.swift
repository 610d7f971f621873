@testable import BeckonDelivery
import BeckonStore
import Foundation
import Testing

/// The shown-within-a-minute gauge counts each minute once and keeps the last hour.
@Suite struct ShownShareWindowTests {
    static func at(_ minutes: Double) -> Date { Date(timeIntervalSince1970: 1_000_000 + minutes * 60) }

    @Test func theFirstCountIsTheWholeSpanAMinuteAtATimeThenOnlyWhatIsNew() {
        var window = ShownShareWindow(span: 3_600, step: 60)
        let first = window.due(endingAt: Self.at(60))
        #expect(first.count == 60 && first.first?.start == Self.at(0) && first.last?.end == Self.at(60))
        for interval in first { window.add([ShownShare(strategy: "content", messages: 1, shown: 1)], for: interval) }
        #expect(window.totals == [ShownShare(strategy: "content", messages: 60, shown: 60)])

        #expect(window.due(endingAt: Self.at(60.5)).isEmpty, "no whole minute yet")
        let next = window.due(endingAt: Self.at(62.2))
        #expect(next.map(\.start) == [Self.at(60), Self.at(61)])
        for interval in next { window.add([ShownShare(strategy: "wake", messages: 2, shown: 1)], for: interval) }
        // Minutes 0 and 1 left the hour.
        #expect(window.totals == [
            ShownShare(strategy: "content", messages: 58, shown: 58), ShownShare(strategy: "wake", messages: 4, shown: 2),
        ])
    }

    @Test func aLongPauseStartsAgainFromTheLastHour() {
        var window = ShownShareWindow(span: 3_600, step: 60)
        for interval in window.due(endingAt: Self.at(60)) { window.add([], for: interval) }
        let due = window.due(endingAt: Self.at(300))
        #expect(due.count == 60 && due.first?.start == Self.at(240), "not the four hours missed")
    }
}
