@testable import BeckonClient
import BeckonClientTestSupport
import BeckonProtocol
import Foundation
import Testing

@Suite struct ClientStoreTests {
    static func message(_ sequence: Int64, id: String? = nil, read: Bool = false, kind: MessageKind = .message) -> SyncMessage {
        SyncMessage(
            sequence: sequence, id: id ?? "m\(sequence)", kind: kind, payload: Array(#"{"text":"hi"}"#.utf8),
            createdAt: Date(timeIntervalSince1970: 1_700_000_000), read: read)
    }

    @Test func aSyncedMessageMovesTheCursorInTheSameCommit() async throws {
        try await TestStore.withWriter { store, writer, _ in
            #expect(try store.cursor() == 0)
            let outcome = try store.storeSynced(Self.message(1), as: writer)
            #expect(outcome == StoreOutcome(isNew: true, isRead: false))
            #expect(try store.cursor() == 1)
            #expect(try store.message(id: "m1")?.payloadJSON?["text"]?.stringValue == "hi")
        }
    }

    @Test func messagesAreDeduplicatedById() async throws {
        try await TestStore.withWriter { store, writer, _ in
            _ = try store.storeSynced(Self.message(1), as: writer)
            let again = try store.storeSynced(Self.message(1), as: writer)
            #expect(again == StoreOutcome(isNew: false, isRead: false))
            #expect(try store.messages().count == 1)
        }
    }

    @Test func theCursorNeverMovesBack() async throws {
        try await TestStore.withWriter { store, writer, _ in
            _ = try store.storeSynced(Self.message(5), as: writer)
            _ = try store.storeSynced(Self.message(3, id: "m3"), as: writer)
            #expect(try store.cursor() == 5)
        }
    }

    @Test func readStateOnlyMovesToRead() async throws {
        try await TestStore.withWriter { store, writer, _ in
            _ = try store.storeSynced(Self.message(1, read: true), as: writer)
            let again = try store.storeSynced(Self.message(1, read: false), as: writer)
            #expect(again.isRead)
            #expect(try store.message(id: "m1")?.isRead == true)
        }
    }

    @Test func aFetchedMessageIsKeptWithoutMovingTheCursor() async throws {
        try await TestStore.withWriter { store, writer, _ in
            let fetched = FetchedMessage(id: "m7", sequence: 7, kind: .message, payload: ["text": "x"], hints: nil)
            #expect(try store.storeFetched(fetched, as: writer))
            #expect(try store.storeFetched(fetched, as: writer) == false)
            #expect(try store.cursor() == 0)
            // When sync delivers it, it is not new: the extension already showed it.
            let synced = try store.storeSynced(Self.message(7, id: "m7"), as: writer)
            #expect(!synced.isNew)
            #expect(try store.message(id: "m7")?.synced == true)
        }
    }

    @Test func localReadsBecomePendingMarkersUntilSent() async throws {
        try await TestStore.withWriter { store, writer, _ in
            _ = try store.storeSynced(Self.message(1), as: writer)
            #expect(try store.markRead(["m1", "unknown"], locally: true, as: writer) == ["m1"])
            #expect(try store.pendingReads() == ["m1", "unknown"])
            try store.removePendingReads(["m1"], as: writer)
            #expect(try store.pendingReads() == ["unknown"])
            #expect(try store.markRead(["m1"], locally: false, as: writer) == [], "already read")
        }
    }

    @Test func writesNeedTheLease() async throws {
        let wall = ManualClock()
        let test = try TestStore()
        defer { test.remove() }
        let store = try test.open(clock: wall)
        // The app's lock sleeps on a clock that never moves: its renewals never run, like a
        // process iOS froze.
        let frozen = ManualClock()
        let app = LeaseLock(store: store, holder: LeaseHolder(role: .app), clock: frozen)
        let writer = try await app.acquire(timeout: .seconds(1))
        await writer.release()
        #expect(throws: ClientStoreError.notLeaseHolder) { try store.storeSynced(Self.message(1), as: writer) }

        // Taken over by another process while this one still had a guard: refused in the
        // transaction, whatever the guard believes.
        let stale = try await app.acquire(timeout: .seconds(1))
        wall.advance(by: .seconds(5))
        let other = LeaseLock(store: store, holder: LeaseHolder(role: .extension), clock: wall)
        let otherWriter = try await other.acquire(timeout: .seconds(1))
        #expect(stale.isHeld, "the frozen process does not know yet")
        #expect(throws: ClientStoreError.notLeaseHolder) { try store.setBadge(3, as: stale) }
        try store.setBadge(3, as: otherWriter)
        #expect(try store.badge() == 3)
        await otherWriter.release()
    }

    @Test func callsThatEndedAreRemembered() async throws {
        try await TestStore.withWriter { store, writer, _ in
            #expect(try store.callOutcome("c1") == nil)
            try store.recordCallEnded("c1", outcome: .answeredElsewhere, as: writer)
            #expect(try store.callOutcome("c1") == .answeredElsewhere)
        }
    }
}

/// A store that cannot be opened yet (before the first unlock, apns.md E.9).
@Suite struct DeferredClientStoreTests {
    @Test func aDeferredStoreOpensAtItsFirstUseOnceItCan() async throws {
        let test = try TestStore()
        defer { test.remove() }
        let readable = Locked(false)
        let store = ClientStore.deferred(path: test.path, clock: ManualClock(), canOpen: { readable.withLock { $0 } })
        #expect(throws: ClientStoreError.self) { try store.cursor() }
        #expect(!store.isAvailable)
        readable.withLock { $0 = true }
        #expect(try store.cursor() == 0)
        store.close()
        #expect(throws: (any Error).self, "closed for good") { try store.cursor() }
    }
}
