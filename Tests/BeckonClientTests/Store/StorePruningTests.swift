@testable import BeckonClient
import BeckonClientTestSupport
import BeckonProtocol
import Foundation
import Testing

/// The device's store is bounded however long the app lives (`StoreRetention`).
@Suite struct StorePruningTests {
    /// A month at 400 messages a day on a virtual clock, each notified, nine in ten read, a call a
    /// day: the store prunes itself once a day (as `BeckonApp` does after a sync) and ends with at
    /// most `maximumMessages`, the ledger of those and of a week, a week of calls, and nothing
    /// the user still needs lost.
    @Test func aMonthOfTrafficStaysBounded() async throws {
        let clock = ManualClock()
        let test = try TestStore()
        defer { test.remove() }
        let store = try test.open(clock: clock)
        let lock = LeaseLock(store: store, holder: LeaseHolder(role: .app), clock: clock)
        let retention = StoreRetention()
        let perDay = 400
        var sequence: Int64 = 0
        var pruned = 0
        for day in 0..<31 {
            let writer = try await lock.acquire(timeout: .seconds(1))
            for n in 0..<perDay {
                sequence += 1
                let id = "d\(day)-\(n)"
                let payload = Array(#"{"text":"\#(String(repeating: "x", count: 200))"}"#.utf8)
                _ = try store.storeSynced(
                    SyncMessage(sequence: sequence, id: id, kind: .message, payload: payload, createdAt: clock.now()), as: writer)
                _ = try store.claimNotification(id, for: [id], by: .app, as: writer)
                if n % 10 != 0 { try store.markRead([id], locally: false, as: writer) }
            }
            try store.recordCallEnded("call-\(day)", outcome: .missed, as: writer)
            if try store.pruneIfDue(retention, as: writer) != nil { pruned += 1 }
            #expect(try store.pruneIfDue(retention, as: writer) == nil, "once a day")
            await writer.release()
            clock.advance(by: .seconds(86_400))
        }
        #expect(pruned == 31)
        let counts = try store.rowCounts()
        #expect(counts["message"]! <= retention.maximumMessages)
        // The ledger of the messages kept, and a week of the others'.
        #expect(counts["notificationLedger"]! <= retention.maximumMessages + 8 * perDay, "\(counts)")
        #expect(counts["call"]! <= 8, "\(counts)")
        // The bound took the read ones first: every unread message of the last ten days is kept.
        for day in 21..<31 {
            #expect(try store.message(id: "d\(day)-0") != nil, "day \(day)'s unread message")
        }
        #expect(try store.cursor() == sequence)
    }

    /// What the user or the server still needs survives any age: a read marker not yet sent, and
    /// a message the extension fetched that sync has not delivered.
    @Test func whatIsStillNeededIsKept() async throws {
        let clock = ManualClock()
        try await TestStore.withWriter(clock: clock) { store, writer, lock in
            _ = try store.storeSynced(
                SyncMessage(sequence: 1, id: "m1", kind: .message, payload: [], createdAt: clock.now()), as: writer)
            _ = try store.storeSynced(
                SyncMessage(sequence: 2, id: "m2", kind: .message, payload: [], createdAt: clock.now()), as: writer)
            try store.markRead(["m1"], locally: true, as: writer)  // Not yet sent.
            await writer.release()
            clock.advance(by: .seconds(10 * 86_400))
            let writer = try await lock.acquire(timeout: .seconds(1))
            try store.storeFetched(FetchedMessage(id: "m3", sequence: 3, kind: .message, payload: nil, hints: nil), as: writer)
            clock.advance(by: .seconds(25 * 86_400))
            let outcome = try store.prune(StoreRetention(), as: writer)
            #expect(outcome.messages == 1)
            #expect(try store.message(id: "m1") != nil, "its read marker is not sent yet")
            #expect(try store.message(id: "m2") == nil, "35 days old")
            #expect(try store.message(id: "m3") != nil, "fetched 25 days ago, not synced yet")
            await writer.release()
        }
    }
}
