@testable import BeckonClient
import BeckonClientTestSupport
import BeckonJSON
import BeckonProtocol
import Foundation
import Testing

/// Notifications by message id, never twice, removed exactly (rule 7; seed 000).
@Suite struct NotificationPresenterTests {
    static func message(_ id: String, read: Bool = false, kind: MessageKind = .message, expiresAt: Date? = nil) -> SyncMessage {
        SyncMessage(
            sequence: 1, id: id, kind: kind, payload: Array(#"{"text":"hello \#(id)"}"#.utf8),
            createdAt: Date(timeIntervalSince1970: 1_700_000_000), expiresAt: expiresAt, read: read)
    }

    static let renderer: MessageRenderer = { message in
        NotificationContent(title: "Anna", body: message.payload?["text"]?.stringValue)
    }

    func with(
        renderer: MessageRenderer? = nil, _ body: (NotificationPresenter, FakeNotificationCenter, ClientStore, LeaseGuard, ManualClock) async throws -> Void
    ) async throws {
        let clock = ManualClock()
        try await TestStore.withWriter(clock: clock) { store, writer, _ in
            let center = FakeNotificationCenter()
            let presenter = NotificationPresenter(store: store, center: center, role: .app, clock: clock, renderer: renderer)
            try await body(presenter, center, store, writer, clock)
        }
    }

    @Test func theIdentifierIsTheMessageIdAndTheAppWritesTheText() async throws {
        try await with(renderer: Self.renderer) { presenter, center, _, writer, _ in
            #expect(await presenter.present(Self.message("m1"), as: writer))
            let content = try #require(await center.delivered["m1"])
            #expect(content.title == "Anna" && content.body == "hello m1")
            #expect(BeckonPushPayload(payload: .object(content.userInfo))?.ids == ["m1"], "a tap can be routed")
        }
    }

    @Test func aMessageAServerAlertAlreadyShowsIsNotNotifiedAgain() async throws {
        try await with(renderer: Self.renderer) { presenter, center, _, writer, _ in
            // The server's alert for m1 and m2: its identifier is the newest id (apns.md E.2).
            var alert = NotificationContent(locKey: "BECKON_NEW_MESSAGE")
            alert.userInfo[BeckonPushPayload.key] = BeckonPushPayload(reason: .unreachableAlert, ids: ["m1", "m2"]).json
            await center.show("m2", alert)
            #expect(await presenter.present(Self.message("m1"), as: writer) == false)
            #expect(await presenter.present(Self.message("m2"), as: writer) == false)
            #expect(await center.added.isEmpty)
        }
    }

    @Test func withoutARendererTheTextIsGenericNeverBlank() async throws {
        try await with { presenter, center, _, writer, _ in
            await presenter.present(Self.message("m1"), as: writer)
            #expect(await center.delivered["m1"]?.locKey == "BECKON_NEW_MESSAGE")
        }
    }

    @Test func aMessageIsNeverShownTwiceByTheAppOrTheExtension() async throws {
        try await with { presenter, center, store, writer, clock in
            #expect(await presenter.present(Self.message("m1"), as: writer))
            await center.dismiss("m1")
            #expect(await presenter.present(Self.message("m1"), as: writer) == false)
            // The extension's presenter shares the ledger.
            let nse = NotificationPresenter(store: store, center: center, role: .extension, clock: clock)
            #expect(await nse.present(Self.message("m1"), as: writer) == false)
            #expect(await center.added == ["m1"])
        }
    }

    @Test func anAlertAlreadyOnScreenIsRecordedNotRepeated() async throws {
        try await with { presenter, center, store, writer, _ in
            await center.show("m1")  // the remote alert, identifier = collapse id = message id
            #expect(await presenter.present(Self.message("m1"), as: writer) == false)
            #expect(await center.added.isEmpty)
            let observed1 = try store.ledgerEntry(messageID: "m1")?.state
            #expect(observed1 == .showing)
        }
    }

    @Test func readExpiredForegroundAndSilentKindsAreNotShown() async throws {
        try await with { presenter, center, _, writer, clock in
            #expect(await presenter.present(Self.message("read", read: true), as: writer) == false)
            #expect(await presenter.present(Self.message("receipt", kind: .receipt), as: writer) == false)
            #expect(await presenter.present(Self.message("old", expiresAt: clock.now()), as: writer) == false)
            await presenter.setForeground(true)
            #expect(await presenter.present(Self.message("live"), as: writer) == false)
            #expect(await center.added.isEmpty)
        }
    }

    @Test func readElsewhereRemovesExactlyThose() async throws {
        try await with { presenter, center, store, writer, _ in
            for id in ["m1", "m2", "m3"] { await presenter.present(Self.message(id), as: writer) }
            await presenter.clear(messageIDs: ["m2"], as: writer)
            #expect(await center.deliveredIdentifiers() == ["m1", "m3"])
            let observed2 = try store.ledgerEntry(messageID: "m2")?.state
            #expect(observed2 == .removed)
        }
    }

    @Test func anAlertStandingForAnUnreadMessageStays() async throws {
        try await with { presenter, center, store, writer, _ in
            // One alert (identifier m3, the newest) for m2 and m3, shown by the extension.
            await center.show("m3")
            _ = try store.claimNotification("m3", for: ["m2", "m3"], by: .extension, as: writer)
            await presenter.clear(messageIDs: ["m2"], as: writer)
            #expect(await center.deliveredIdentifiers() == ["m3"])
            await presenter.clear(messageIDs: ["m3"], as: writer)
            #expect(await center.deliveredIdentifiers().isEmpty)
        }
    }

    /// An alert iOS showed by itself (no extension ran, the app was away) is found when the app
    /// reconciles: recorded as showing, so it is never shown again, and queued as a shown receipt;
    /// a notification the user swiped away is a removed one.
    @Test func alertsIOSShowedByItselfBecomeShownReceipts() async throws {
        try await with { presenter, center, store, writer, _ in
            await presenter.present(Self.message("m1"), as: writer)
            await center.show("alert", NotificationContent(body: "2 new messages", userInfo: ["beckon": ["reason": "alert", "ids": ["m2", "m3"]]]))
            await center.dismiss("m1")
            #expect(await presenter.reconcile(as: writer) == 1)
            let receipts = try store.pendingReceipts().map { "\($0.messageID):\($0.kind.rawValue)" }.sorted()
            #expect(receipts == ["m1:removed", "m1:shown", "m2:shown", "m3:shown"])
            #expect(try store.ledgerEntry(messageID: "m2")?.state == .showing)
            #expect(!(try store.claimNotification("m2", for: ["m2"], by: .app, as: writer)), "never shown twice")
            // Reconciling again finds nothing new.
            try store.removePendingReceipts(try store.pendingReceipts(), as: writer)
            _ = await presenter.reconcile(as: writer)
            #expect(try store.pendingReceipts().isEmpty)
        }
    }

    @Test func theBadgeZeroPushLeavesTheLedgerEmpty() async throws {
        try await with { presenter, center, store, writer, _ in
            for id in ["m1", "m2"] { await presenter.present(Self.message(id), as: writer) }
            // The app is woken by nothing: iOS clears everything; the app reconciles later.
            await center.setBadge(0)
            #expect(await presenter.reconcile(as: writer) == 2)
            let nothingShowing = try store.showingNotifications().isEmpty
            #expect(nothingShowing)
            // And seen by the app (in front): the same end state.
            await presenter.present(Self.message("m3"), as: writer)
            await presenter.clearAll(as: writer)
            let stillNothingShowing = try store.showingNotifications().isEmpty
            #expect(stillNothingShowing)
            #expect(await center.badge == 0)
            #expect(await center.delivered.isEmpty)
        }
    }

    @Test func aFailedAddLeavesNothingBelievedShowing() async throws {
        try await with { presenter, center, store, writer, _ in
            await center.setFailAdds(true)
            #expect(await presenter.present(Self.message("m1"), as: writer) == false)
            let nothingShowing = try store.showingNotifications().isEmpty
            #expect(nothingShowing)
        }
    }

    @Test func inFrontAnAlertForAKnownReadMessageIsNotShown() async throws {
        try await with { presenter, _, store, writer, _ in
            _ = try store.storeSynced(Self.message("m1", read: true), as: writer)
            #expect(await presenter.shouldPresent(identifier: "m1", messageIDs: ["m1"], as: writer) == false)
            #expect(await presenter.shouldPresent(identifier: "m2", messageIDs: ["m2"], as: writer))
            #expect(try store.ledgerEntry(messageID: "m2") != nil, "recorded as shown")
            #expect(await presenter.shouldPresent(identifier: "m2", messageIDs: ["m2"], as: writer) == false)
        }
    }
}
