@testable import BeckonStore
import BeckonProtocol
import Foundation
import Testing

/// Each app's event log: written by the store with the records it tells of, only for the apps it
/// is on for, read in order, and sent by one node at a time up to a bounded backlog.
@Suite struct EventLogTests {
    static let phone = MessageTraceTests.phone
    static let tablet = DeviceRef(appID: "chat", deviceID: "tablet")

    static func kinds(_ events: [MessageEvent]) -> [String] {
        events.map { [$0.kind.rawValue, $0.messageID ?? "-", $0.deviceID ?? "-"].joined(separator: " ") }
    }

    /// The log as a reader sees it once `count` events are in it. On PostgreSQL an event is read
    /// only when every transaction older than its own has ended (EventPosition), and the other
    /// tests' transactions run meanwhile (in any database of the server: transaction ids are the
    /// server's), some holding one open on purpose for a while, so the reader waits (at most 60 s).
    static func all(_ store: any BeckonStore, count: Int = 0) async throws -> [MessageEvent] {
        let deadline = ContinuousClock.now + .seconds(60)
        while true {
            let events = try await store.events(appID: "chat", after: .start, limit: 1_000)
            if events.count >= count { return events }
            guard ContinuousClock.now < deadline else { throw EventLogTestError.fewerEvents(events.count, count) }
            try await Task.sleep(for: .milliseconds(20))
        }
    }

    enum EventLogTestError: Error {
        case fewerEvents(Int, Int)
    }

    @Test func eventsAreWrittenWithTheRecordsTheyTellOfInOrder() async throws {
        let clock = TestClock()
        try await withEachStore(clock: clock) { store in
            try await store.setEventLogApps(["chat"], now: clock.now)
            let (first, second, pushes) = try await MessageTraceTests.seed(store)
            try await store.completePush(id: pushes[0].id, result: .retry(status: 503, reason: "ServiceUnavailable", nextAttempt: clock.now))
            try await store.completePush(id: pushes[0].id, result: .sent(at: clock.now, uniqueID: nil))
            try await store.completePush(id: pushes[1].id, result: .failed(status: 410, reason: "Unregistered", at: clock.now))
            _ = try await store.ack(device: Self.phone, upTo: 2)
            try await store.recordReceipts([
                MessageReceipt(device: Self.phone, messageID: first, kind: .shown, at: clock.now),
                MessageReceipt(device: Self.phone, messageID: first, kind: .removed, at: clock.now),
            ])
            try await store.recordReceipts([MessageReceipt(device: Self.phone, messageID: first, kind: .shown, at: clock.now)])
            _ = try await store.markRead(device: Self.tablet, messageIDs: [second])

            let events = try await Self.all(store, count: 11)
            let (low, high) = first < second ? (first, second) : (second, first)
            #expect(Self.kinds(events) == [
                "accepted \(first) -", "accepted \(second) -",
                "pushed \(first) phone",
                // A push's messages in the order of their ids.
                "apns-refused \(low) phone", "token-dead \(low) phone", "apns-refused \(high) phone", "token-dead \(high) phone",
                "delivered \(first) phone", "delivered \(second) phone",
                "shown \(first) phone",
                "read \(second) tablet",
            ])
            #expect(events.map(\.position) == events.map(\.position).sorted(), "in the log's order")
            #expect(Set(events.map(\.id)).count == events.count)
            let pushed = try #require(events.first { $0.kind == .pushed })
            #expect(pushed.pushID == pushes[0].id && pushed.apnsID == pushes[0].id && pushed.status == 200 && pushed.userID == "ann")
            let refused = try #require(events.first { $0.kind == .apnsRefused })
            #expect(refused.status == 410 && refused.reason == "Unregistered")
            #expect(events.first { $0.kind == .accepted }?.userID == "ann")
            let after = try await store.events(appID: "chat", after: events[2].position, limit: 2)
            #expect(after.map(\.id) == events[3...4].map(\.id), "read on from a position")
            #expect(try await store.events(appID: "other", after: .start, limit: 10).isEmpty)
        }
    }

    @Test func anAppWithoutTheLogHasNoEventsAndTurningItOffDeletesThem() async throws {
        let clock = TestClock()
        try await withEachStore(clock: clock) { store in
            try await store.setEventLogApps(["chat"], now: clock.now)
            _ = try await MessageTraceTests.seed(store)
            #expect(try await Self.all(store, count: 2).count == 2)
            #expect(try await store.eventLogStatus(appID: "chat", now: clock.now)?.behind == 2)
            try await store.setEventLogApps([], now: clock.now)
            #expect(try await Self.all(store).isEmpty)
            #expect(try await store.eventLogStatus(appID: "chat", now: clock.now) == nil)
            _ = try await store.appendMessages(appID: "chat", [NewMessage(recipients: ["ann"])])
            #expect(try await Self.all(store).isEmpty, "off: nothing is written")
        }
    }

    /// A message's last word per device is delivered or expired, never both.
    @Test func expiryIsLoggedForTheDevicesThatHadNotGotTheMessage() async throws {
        let clock = TestClock()
        try await withEachStore(clock: clock) { store in
            try await store.createApp(.fixture())
            _ = try await store.registerDevice(.fixture(device: "phone", user: "ann", pushToken: token("a")))
            _ = try await store.registerDevice(.fixture(device: "tablet", user: "ann", pushToken: token("b")))
            try await store.setEventLogApps(["chat"], now: clock.now)
            let expiring = try await store.appendMessages(
                appID: "chat", [NewMessage(recipients: ["ann"], expiresAt: clock.now + 60)])[0].message.id
            _ = try await store.appendMessages(appID: "chat", [NewMessage(recipients: ["ann"], expiresAt: clock.now + 600)])
            _ = try await store.ack(device: Self.phone, upTo: 1)
            #expect(try await store.recordExpiredEvents(appID: "chat", now: clock.now) == 0, "nothing expired yet")
            clock.advance(by: 61)
            #expect(try await store.recordExpiredEvents(appID: "chat", now: clock.now) == 1)
            #expect(try await store.recordExpiredEvents(appID: "chat", now: clock.now) == 0, "each expiry once")
            _ = try await store.ack(device: Self.tablet, upTo: 2)
            let terminal = try await Self.all(store, count: 5).filter { $0.kind.isTerminal && $0.messageID == expiring }
            #expect(Self.kinds(terminal) == ["delivered \(expiring) phone", "expired \(expiring) tablet"])
            let trace = try #require(try await store.traceRecords(appID: "chat", messageID: expiring))
            #expect(!trace.receipts.contains { $0.device == Self.tablet }, "an ack after the expiry is not a delivery: the sync skipped it")
        }
    }

    @Test func oneNodeSendsAtATimeAndTheCursorMovesOnlyForTheHolder() async throws {
        let clock = TestClock()
        try await withEachStore(clock: clock) { store in
            try await store.setEventLogApps(["chat"], now: clock.now)
            _ = try await MessageTraceTests.seed(store)
            let events = try await Self.all(store, count: 2)
            let start = try #require(try await store.leaseWebhook(appID: "chat", node: "a", until: clock.now + 30, now: clock.now))
            #expect(try await store.events(appID: "chat", after: start, limit: 10).map(\.id) == events.map(\.id))
            #expect(try await store.leaseWebhook(appID: "chat", node: "b", until: clock.now + 30, now: clock.now) == nil)
            // Between renewals the holder reads the cursor; no one else can.
            #expect(try await store.webhookCursor(appID: "chat", node: "a", now: clock.now) == start)
            #expect(try await store.webhookCursor(appID: "chat", node: "b", now: clock.now) == nil)
            let attempt = WebhookAttempt(
                appID: "chat", at: clock.now, firstEvent: events[0].id, lastEvent: events[0].id, events: 1, status: 204, duration: 0.002)
            #expect(try await store.advanceWebhook(appID: "chat", node: "a", to: events[0].position, attempt: attempt))
            var status = try #require(try await store.eventLogStatus(appID: "chat", now: clock.now))
            #expect(status.behind == 1 && status.sender == "a" && status.lastAttempt?.status == 204)
            clock.advance(by: 31)
            #expect(try await store.webhookCursor(appID: "chat", node: "a", now: clock.now) == nil, "a lapsed lease reads nothing")
            let taken = try #require(try await store.leaseWebhook(appID: "chat", node: "b", until: clock.now + 30, now: clock.now))
            #expect(taken == events[0].position, "the new holder goes on from the cursor")
            #expect(try await store.advanceWebhook(appID: "chat", node: "a", to: events[1].position, attempt: attempt) == false)
            try await store.recordWebhookAttempt(WebhookAttempt(
                appID: "chat", at: clock.now, firstEvent: events[1].id, lastEvent: events[1].id, events: 1, status: 500,
                error: "Internal Server Error", duration: 0.001))
            #expect(try await store.webhookAttempts(appID: "chat", limit: 10).map(\.status) == [500, 204], "newest first")
            status = try #require(try await store.eventLogStatus(appID: "chat", now: clock.now))
            #expect(status.cursor == events[0].position && status.sender == "b" && status.oldestWaiting != nil)

            // A replay: the cursor goes back, everything after it is sent again.
            let before = try #require(try await store.eventPosition(appID: "chat", id: events[0].id))
            try await store.rewindWebhook(appID: "chat", to: EventPosition(transaction: before.transaction, sequence: before.sequence - 1))
            #expect(try await store.eventLogStatus(appID: "chat", now: clock.now)?.behind == 2)
            #expect(try await store.eventPosition(appID: "chat", before: clock.now + 3_600) == events[1].position, "none since: the end")
            try await store.rewindWebhook(appID: "chat", to: events[1].position)
            #expect(try await store.eventLogStatus(appID: "chat", now: clock.now)?.behind == 2, "never forward")
        }
    }

    @Test func beyondTheBacklogTheOldestWaitingEventsAreDroppedAndCounted() async throws {
        let clock = TestClock()
        try await withEachStore(clock: clock) { store in
            try await store.createApp(.fixture())
            try await store.setEventLogApps(["chat"], now: clock.now)
            _ = try await store.appendMessages(appID: "chat", (0..<10).map { _ in NewMessage(recipients: ["ann"]) })
            let events = try await Self.all(store, count: 10)
            _ = try await store.leaseWebhook(appID: "chat", node: "a", until: clock.now + 30, now: clock.now)
            let attempt = WebhookAttempt(appID: "chat", at: clock.now, firstEvent: 0, lastEvent: 0, events: 2, status: 200, duration: 0)
            #expect(try await store.advanceWebhook(appID: "chat", node: "a", to: events[1].position, attempt: attempt))
            #expect(try await store.trimEventLog(appID: "chat", backlog: 6, sentBefore: clock.now - 60) == 2)
            let status = try #require(try await store.eventLogStatus(appID: "chat", now: clock.now))
            #expect(status.behind == 6 && status.dropped == 2 && status.cursor == events[3].position)
            #expect(try await Self.all(store).map(\.id) == [events[0], events[1]].map(\.id) + events[4...].map(\.id),
                    "sent events stay for replays until they are old")
            clock.advance(by: 120)
            #expect(try await store.trimEventLog(appID: "chat", backlog: 6, sentBefore: clock.now - 60) == 0)
            #expect(try await Self.all(store).map(\.id) == events[4...].map(\.id))
            #expect(try await store.eventPosition(appID: "chat", before: clock.now - 3_600) == EventPosition(
                transaction: events[4].position.transaction, sequence: events[4].position.sequence - 1))
        }
    }
}
