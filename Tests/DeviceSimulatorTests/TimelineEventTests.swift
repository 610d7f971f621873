import BeckonJSON
import Testing

@testable import DeviceSimulator

@Suite struct TimelineEventTests {
    @Test func anEventIsWrittenWithItsKindAndFields() {
        let event = TimelineEvent(time: 1.23456, device: "phone", what: .pushHeld(push: "A1", by: .ios))
        #expect(event.json == ["t": .double(1.235), "device": "phone", "kind": "push-held", "push": "A1", "by": "ios"])
    }
}
