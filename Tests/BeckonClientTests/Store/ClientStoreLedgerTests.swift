@testable import BeckonClient
import BeckonClientTestSupport
import Testing

/// The notification ledger: shared by app and extension, so nothing is shown twice.
@Suite struct ClientStoreLedgerTests {
    @Test func aMessageIsClaimedOnceWhoeverAsks() async throws {
        try await TestStore.withWriter { store, writer, _ in
            let first = try store.claimNotification("m1", for: ["m1"], by: .extension, as: writer)
            let second = try store.claimNotification("m1", for: ["m1"], by: .app, as: writer)
            #expect(first && !second)
            #expect(try store.ledgerEntry(messageID: "m1")?.shownBy == .extension)
        }
    }

    @Test func removedNotificationsStayInTheLedger() async throws {
        try await TestStore.withWriter { store, writer, _ in
            _ = try store.claimNotification("m1", for: ["m1"], by: .app, as: writer)
            try store.markNotificationsRemoved(["m1"], as: writer)
            #expect(try store.ledgerEntry(messageID: "m1")?.state == .removed)
            let again = try store.claimNotification("m1", for: ["m1"], by: .app, as: writer)
            #expect(!again, "never twice")
            #expect(try store.showingNotifications().isEmpty)
        }
    }

    @Test func oneAlertMayStandForSeveralMessages() async throws {
        try await TestStore.withWriter { store, writer, _ in
            _ = try store.claimNotification("m3", for: ["m2", "m3"], by: .extension, as: writer)
            _ = try store.claimNotification("m4", for: ["m4"], by: .app, as: writer)
            #expect(try store.showingNotifications() == ["m3": ["m2", "m3"], "m4": ["m4"]])
            let shared = try store.ledgerEntries(sharingNotificationsWith: ["m2"]).map(\.messageID)
            #expect(shared == ["m2", "m3"])
            #expect(try store.markAllNotificationsRemoved(as: writer) == ["m3", "m4"])
            #expect(try store.showingNotifications().isEmpty)
        }
    }
}
