@testable import BeckonClient
import BeckonClientTestSupport
import BeckonProtocol
import Testing

/// Receipts queue where the ledger records what the user saw: shown when a notification is
/// claimed or rewritten, removed when it is taken away, opened on a tap; kept until sent.
@Suite struct ClientStoreReceiptsTests {
    func kinds(_ store: ClientStore) throws -> [String] {
        try store.pendingReceipts().map { "\($0.messageID):\($0.kind.rawValue)" }.sorted()
    }

    @Test func theLedgerQueuesShownAndRemoved() async throws {
        try await TestStore.withWriter { store, writer, _ in
            _ = try store.claimNotification("m3", for: ["m2", "m3"], by: .extension, as: writer)
            _ = try store.claimNotification("m3", for: ["m2", "m3"], by: .app, as: writer)  // refused: no second receipt
            try store.recordShown("m4", for: ["m4"], by: .extension, as: writer)
            #expect(try kinds(store) == ["m2:shown", "m3:shown", "m4:shown"])
            try store.markNotificationsRemoved(["m3"], as: writer)
            #expect(try kinds(store) == ["m2:removed", "m2:shown", "m3:removed", "m3:shown", "m4:shown"])
            _ = try store.markAllNotificationsRemoved(as: writer)
            #expect(try kinds(store).contains("m4:removed"))
        }
    }

    @Test func sentReceiptsAreRemovedAndTheFirstOfAKindIsKept() async throws {
        try await TestStore.withWriter { store, writer, _ in
            try store.queueReceipts(["m1"], kind: .opened, as: writer)
            let first = try store.pendingReceipts()
            try store.queueReceipts(["m1"], kind: .opened, as: writer)
            #expect(try store.pendingReceipts() == first, "a repeat keeps the first time")
            try store.removePendingReceipts(first, as: writer)
            #expect(try store.pendingReceipts().isEmpty)
        }
    }

    @Test func unsentReceiptsAreBoundedKeepingTheNewest() async throws {
        try await TestStore.withWriter { store, writer, _ in
            let ids = (0..<(ClientStore.maximumPendingReceipts + 10)).map { "m\($0)" }
            try store.queueReceipts(ids, kind: .shown, as: writer)
            #expect(try store.pendingReceipts(limit: 10_000).count == ClientStore.maximumPendingReceipts)
        }
    }
}
