@testable import BeckonEvents
import BeckonStore
import Foundation
import Testing

@Suite struct WebhookDeliveryStateMachineTests {
    static func event(_ n: Int64) -> MessageEvent {
        MessageEvent(position: EventPosition(sequence: n), appID: "chat", kind: .accepted, at: Date(timeIntervalSince1970: 0))
    }

    static func machine() -> WebhookDeliveryStateMachine {
        WebhookDeliveryStateMachine(backoff: WebhookBackoff(initial: 1, maximum: 8), pollInterval: 0.2, leaseRetry: 10)
    }

    @Test func aBatchIsSentUntilAnsweredThenTheCursorMovesPastIt() {
        var machine = Self.machine()
        let cursor = EventPosition(sequence: 4)
        #expect(machine.leased(cursor: cursor) == .read(after: cursor))
        let batch = [Self.event(5), Self.event(6)]
        #expect(machine.read(batch, after: cursor) == .send(batch))
        #expect(machine.answered(status: 500) == .retry(after: 1))
        #expect(machine.leased(cursor: cursor) == .send(batch), "the same batch again, not a new read")
        #expect(machine.answered(status: 0) == .retry(after: 2))
        #expect(machine.leased(cursor: cursor) == .send(batch))
        #expect(machine.answered(status: 429) == .retry(after: 4))
        #expect(machine.leased(cursor: cursor) == .send(batch))
        #expect(machine.answered(status: 503) == .retry(after: 8))
        #expect(machine.leased(cursor: cursor) == .send(batch))
        #expect(machine.answered(status: 503) == .retry(after: 8), "at most the maximum")
        #expect(machine.leased(cursor: cursor) == .send(batch))
        #expect(machine.answered(status: 204) == .advance(to: EventPosition(sequence: 6)))
        #expect(machine.failures == 0)
        #expect(machine.leased(cursor: EventPosition(sequence: 6)) == .read(after: EventPosition(sequence: 6)))
        #expect(machine.read([], after: EventPosition(sequence: 6)) == .wait(0.2), "nothing waiting: poll")
    }

    @Test func aMovedCursorMakesTheBatchStale() {
        var machine = Self.machine()
        let cursor = EventPosition(sequence: 4)
        _ = machine.leased(cursor: cursor)
        _ = machine.read([Self.event(5)], after: cursor)
        _ = machine.answered(status: 500)
        // A replay set the cursor back: read from there.
        #expect(machine.leased(cursor: EventPosition(sequence: 1)) == .read(after: EventPosition(sequence: 1)))
    }

    @Test func anotherNodesLeaseDropsTheBatch() {
        var machine = Self.machine()
        let cursor = EventPosition(sequence: 4)
        _ = machine.leased(cursor: cursor)
        _ = machine.read([Self.event(5)], after: cursor)
        _ = machine.answered(status: 500)
        #expect(machine.leased(cursor: nil) == .wait(10))
        #expect(machine.leased(cursor: cursor) == .read(after: cursor), "taken back: read again")
    }
}
