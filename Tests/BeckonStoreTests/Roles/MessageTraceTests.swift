import APNSCore
@testable import BeckonStore
import BeckonProtocol
import Foundation
import Testing

/// A message's records: the pushes that stood for it with every attempt, the devices' receipts
/// and reads, kept until the trace retention prunes them.
@Suite struct MessageTraceTests {
    static let phone = DeviceRef(appID: "chat", deviceID: "phone")

    static func push(_ n: Int, for messageIDs: [String], at seconds: TimeInterval) throws -> OutboxPush {
        let id = UUID(uuidString: String(format: "00000000-0000-4000-8000-%012d", n))!
        let notification = try APNSRenderedNotification(
            APNSAlertNotification(alert: APNSAlert(title: "t"), collapseID: "c\(n)", apnsID: id), bundleID: "com.example.chat")
        return OutboxPush(
            device: phone, tokenKind: .remote, reason: .alert, strategy: .content, notification: notification,
            messageCount: messageIDs.count, messageIDs: messageIDs, createdAt: Date(timeIntervalSince1970: seconds))
    }

    /// Ann has a phone; two messages to her, the first pushed twice (a retry, then sent), both in
    /// one summarising alert later.
    static func seed(_ store: any BeckonStore) async throws -> (first: String, second: String, pushes: [OutboxPush]) {
        try await store.createApp(.fixture())
        _ = try await store.registerDevice(.fixture(device: "phone", user: "ann", pushToken: token("a")))
        _ = try await store.registerDevice(.fixture(device: "tablet", user: "ann", pushToken: token("b")))
        let appended = try await store.appendMessages(appID: "chat", [NewMessage(recipients: ["ann"]), NewMessage(recipients: ["ann"])])
        let first = appended[0].message.id, second = appended[1].message.id
        let pushes = [try push(1, for: [first], at: 1_000), try push(2, for: [first, second], at: 1_100)]
        try await store.saveDelivery(DeliveryBatch(pushes: pushes))
        return (first, second, pushes)
    }

    @Test func aMessagesPushesComeWithEveryAttemptAndAnswer() async throws {
        try await withEachStore { store in
            let (first, second, pushes) = try await Self.seed(store)
            try await store.completePush(id: pushes[0].id, result: .retry(status: 503, reason: "ServiceUnavailable", nextAttempt: Date(timeIntervalSince1970: 1_010)))
            try await store.completePush(id: pushes[0].id, result: .sent(at: Date(timeIntervalSince1970: 1_011), uniqueID: "6f1c8a9e-3b5d-4f2a-9c7e-1a2b3c4d5e6f"))
            try await store.completePush(id: pushes[1].id, result: .failed(status: 410, reason: "Unregistered", at: Date(timeIntervalSince1970: 1_101)))

            let records = try #require(try await store.traceRecords(appID: "chat", messageID: first))
            #expect(records.message.id == first)
            #expect(records.positions == [MailboxPosition(userID: "ann", sequence: 1)])
            #expect(records.devices.map(\.id) == ["phone", "tablet"])
            #expect(records.pushes.map(\.id) == pushes.map(\.id), "both pushes stood for the first message")
            let retried = records.pushes[0]
            #expect(retried.state == "sent" && retried.pushType == "alert" && retried.priority == 10 && retried.collapseID == "c1")
            #expect(retried.apnsID == pushes[0].id)
            #expect(retried.attempts.map(\.outcome) == [.retry, .sent])
            #expect(retried.attempts.map(\.status) == [503, 200])
            #expect(retried.attempts[0].reason == "ServiceUnavailable")
            #expect(retried.attempts[1].uniqueID == "6f1c8a9e-3b5d-4f2a-9c7e-1a2b3c4d5e6f")
            #expect(retried.attempts[1].at == Date(timeIntervalSince1970: 1_011))
            #expect(records.pushes[1].attempts.map(\.reason) == ["Unregistered"])

            let secondRecords = try #require(try await store.traceRecords(appID: "chat", messageID: second))
            #expect(secondRecords.pushes.map(\.id) == [pushes[1].id], "only the summarising alert stood for the second")
            #expect(try await store.traceRecords(appID: "chat", messageID: "no-such-message") == nil)
            #expect(try await store.traceRecords(appID: "other", messageID: first) == nil, "another app's message is not found")
        }
    }

    @Test func receiptsKeepTheFirstOfEachKindAndOnlyTheRecipientsOwn() async throws {
        try await withEachStore { store in
            let (first, _, _) = try await Self.seed(store)
            _ = try await store.registerDevice(.fixture(device: "bob-phone", user: "bob", pushToken: token("c")))
            let shown = MessageReceipt(device: Self.phone, messageID: first, kind: .shown, at: Date(timeIntervalSince1970: 1_020))
            let recorded = try await store.recordReceipts([
                shown,
                MessageReceipt(device: Self.phone, messageID: first, kind: .shown, at: Date(timeIntervalSince1970: 1_030)),
                MessageReceipt(device: Self.phone, messageID: first, kind: .opened, at: Date(timeIntervalSince1970: 1_040)),
                // Bob's device cannot write into Ann's message's trace; an unknown message is ignored.
                MessageReceipt(device: DeviceRef(appID: "chat", deviceID: "bob-phone"), messageID: first, kind: .shown, at: Date()),
                MessageReceipt(device: Self.phone, messageID: "unknown", kind: .shown, at: Date()),
            ])
            #expect(recorded == 2)
            #expect(try await store.recordReceipts([shown]) == 0, "a repeat is not new")
            let receipts = try #require(try await store.traceRecords(appID: "chat", messageID: first)).receipts
            #expect(receipts.map(\.kind) == [.shown, .opened])
            #expect(receipts[0].at == Date(timeIntervalSince1970: 1_020), "the first report counts")
        }
    }

    @Test func anAcknowledgementIsASyncedReceiptForWhatItNewlyCovers() async throws {
        let clock = TestClock()
        try await withEachStore(clock: clock) { store in
            let (first, second, _) = try await Self.seed(store)
            _ = try await store.ack(device: Self.phone, upTo: 1)
            clock.advance(by: 5)
            _ = try await store.ack(device: Self.phone, upTo: 2)
            _ = try await store.ack(device: Self.phone, upTo: 2)  // again: nothing new
            let firstSynced = try #require(try await store.traceRecords(appID: "chat", messageID: first)).receipts
            let secondSynced = try #require(try await store.traceRecords(appID: "chat", messageID: second)).receipts
            #expect(firstSynced.map(\.kind) == [.synced] && secondSynced.map(\.kind) == [.synced])
            #expect(secondSynced[0].at.timeIntervalSince(firstSynced[0].at) >= 4.9, "each when its ack came")
            #expect(firstSynced[0].device == Self.phone)
        }
    }

    @Test func readsAreInTheTrace() async throws {
        try await withEachStore { store in
            let (first, _, _) = try await Self.seed(store)
            _ = try await store.markRead(device: DeviceRef(appID: "chat", deviceID: "tablet"), messageIDs: [first])
            let reads = try #require(try await store.traceRecords(appID: "chat", messageID: first)).reads
            #expect(reads.map(\.deviceID) == ["tablet"] && reads.map(\.userID) == ["ann"])
        }
    }

    @Test func pruningRemovesFinishedPushesAndReceiptsBeforeTheCutoff() async throws {
        try await withEachStore { store in
            let (first, _, pushes) = try await Self.seed(store)
            try await store.completePush(id: pushes[0].id, result: .sent(at: Date(timeIntervalSince1970: 1_011)))
            _ = try await store.recordReceipts([MessageReceipt(device: Self.phone, messageID: first, kind: .shown, at: Date(timeIntervalSince1970: 1_050))])
            // The push sent at 1,000 (its messages and attempt with it) and the receipt at 1,050 go
            // before 1,060; the push of 1,100 stays, and while it is pending, it stays at any cutoff.
            #expect(try await store.pruneTrace(before: Date(timeIntervalSince1970: 1_060)) == 2)
            #expect(try await store.pruneTrace(before: Date(timeIntervalSince1970: 2_000)) == 0)
            let records = try #require(try await store.traceRecords(appID: "chat", messageID: first))
            #expect(records.pushes.map(\.id) == [pushes[1].id] && records.receipts.isEmpty)
            #expect(try await store.appCounts(appID: "chat").pendingPushes == 1)
        }
    }

    /// The status page's and the metrics' figure: of the window's messages, those a device showed
    /// within the minute, by the strategy of their first push (`live` without one).
    @Test func shownSharesCountReceiptsWithinTheWindowByStrategy() async throws {
        let clock = TestClock()
        try await withEachStore(clock: clock) { store in
            let start = clock.now
            try await store.createApp(.fixture())
            _ = try await store.registerDevice(.fixture(device: "phone", user: "ann", pushToken: token("a")))
            let ids = try await store.appendMessages(appID: "chat", (1...3).map { _ in NewMessage(recipients: ["ann"]) }).map(\.message.id)
            // The first two were pushed (content); the third went live.
            try await store.saveDelivery(DeliveryBatch(pushes: [
                try Self.push(1, for: [ids[0]], at: start.timeIntervalSince1970 + 1), try Self.push(2, for: [ids[1]], at: start.timeIntervalSince1970 + 1),
            ]))
            _ = try await store.recordReceipts([
                MessageReceipt(device: Self.phone, messageID: ids[0], kind: .shown, at: start.addingTimeInterval(30)),
                MessageReceipt(device: Self.phone, messageID: ids[1], kind: .shown, at: start.addingTimeInterval(90)),  // too late
                MessageReceipt(device: Self.phone, messageID: ids[2], kind: .shown, at: start.addingTimeInterval(2)),
            ])
            let shares = try await store.shownShares(
                appID: "chat", from: start.addingTimeInterval(-1), to: start.addingTimeInterval(1), within: 60)
            #expect(shares == [ShownShare(strategy: "content", messages: 2, shown: 1), ShownShare(strategy: "live", messages: 1, shown: 1)])
            #expect(try await store.shownShares(appID: "chat", from: start.addingTimeInterval(1), to: start.addingTimeInterval(2), within: 60).isEmpty)
        }
    }
}
