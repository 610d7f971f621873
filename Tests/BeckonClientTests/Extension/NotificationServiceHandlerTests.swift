@testable import BeckonClient
import BeckonClientTestSupport
import BeckonJSON
import BeckonProtocol
import BeckonSeal
import Foundation
import Testing

/// The notification service extension: only what the push names, within the deadline and the
/// memory budget, never blank (docs/design.md, "Small, bounded extensions").
@Suite struct NotificationServiceHandlerTests {
    static func push(ids: [String], sealed: String? = nil, alert: JSONValue = ["loc-key": "BECKON_NEW_MESSAGE"]) -> IncomingNotification {
        var beckon: [String: JSONValue] = ["reason": "alert", "ids": .array(ids.map(JSONValue.string))]
        if let sealed { beckon["sealed"] = .string(sealed) }
        return IncomingNotification(
            identifier: ids.last ?? "x", payload: ["aps": ["alert": alert, "mutable-content": 1], "beckon": .object(beckon)])
    }

    func handler(
        _ fetcher: FakeMessageFetcher, clock: ManualClock = ManualClock(), memory: Int? = nil,
        configure: (inout NotificationServiceHandler.Configuration) -> Void = { _ in }, store: ClientStore? = nil,
        lock: LeaseLock? = nil, renderer: MessageRenderer? = nil
    ) -> NotificationServiceHandler {
        var configuration = NotificationServiceHandler.Configuration()
        configure(&configuration)
        return NotificationServiceHandler(
            configuration: configuration, fetcher: fetcher, clock: clock, memory: FakeMemoryGauge(bytes: memory),
            store: store, lock: lock, renderer: renderer)
    }

    @Test func fetchesOnlyTheNamedMessageAndRewritesTheText() async throws {
        let fetcher = FakeMessageFetcher()
        fetcher.answer("m1", title: "Anna", body: "Lunch?")
        let outcome = await handler(fetcher).handle(Self.push(ids: ["m1"]))
        #expect(outcome == .rewritten(NotificationContent(
            title: "Anna", body: "Lunch?", userInfo: ["beckon": ["reason": "alert", "ids": ["m1"]]])))
        #expect(fetcher.requested == ["m1"])
    }

    /// Rule 11: the push APNs kept for a phone that was offline names every message it missed;
    /// the notification lists each one it could read, oldest first, and counts the rest.
    @Test func aPushNamingManyListsTheNewestFewAndCountsTheRest() async throws {
        let fetcher = FakeMessageFetcher()
        for id in ["m1", "m2", "m3", "m4", "m5"] { fetcher.answer(id, body: "text \(id)") }
        let outcome = await handler(fetcher).handle(Self.push(ids: ["m1", "m2", "m3", "m4", "m5"]))
        #expect(fetcher.requested == ["m5", "m4", "m3"], "ExtensionBudget.maximumFetches")
        #expect(outcome.content?.body == "text m3\ntext m4\ntext m5\nand 2 more")
        #expect(outcome.content?.userInfo["beckon"]?["ids"] == ["m3", "m4", "m5"], "it stands for what it shows")
    }

    @Test func aSummaryNamesEachSenderAndTheServersCountOfWhatDidNotFit() async throws {
        let fetcher = FakeMessageFetcher()
        fetcher.answer("m1", title: "Anna", body: "Lunch?")
        fetcher.answer("m2", title: "Bob", body: "Running late")
        var push = Self.push(ids: ["m1", "m2"])
        push.payload = ["aps": ["alert": ["loc-key": "BECKON_NEW_MESSAGE"], "mutable-content": 1],
                        "beckon": ["reason": "unreachable-alert", "ids": ["m1", "m2"], "unseen": 5]]
        let outcome = await handler(fetcher, configure: { $0.moreFormat = "+%d" }).handle(push)
        #expect(outcome.content?.title == nil)
        #expect(outcome.content?.body == "Anna: Lunch?\nBob: Running late\n+3")
    }

    /// A message another notification shows already is not fetched or listed again: the user
    /// would see it twice.
    @Test func aMessageShownAlreadyIsLeftOutOfTheSummary() async throws {
        try await TestStore.withWriter { store, writer, lock in
            _ = try store.claimNotification("m1", for: ["m1"], by: .app, as: writer)
            await writer.release()
            let fetcher = FakeMessageFetcher()
            fetcher.answer("m1", body: "one")
            fetcher.answer("m2", body: "two")
            let outcome = await handler(fetcher, store: store, lock: lock).handle(Self.push(ids: ["m1", "m2"]))
            #expect(fetcher.requested == ["m2"])
            #expect(outcome.content?.body == "two")
            #expect(outcome.content?.userInfo["beckon"]?["ids"] == ["m2"])
        }
    }

    /// The alert for every unseen message keeps one collapse id, so it replaces the notification
    /// shown under it: what that one listed is listed again, in its place (design rule 11).
    @Test func anAlertReplacingItsIdentifiersNotificationListsWhatThatOneShowed() async throws {
        try await TestStore.withWriter { store, writer, lock in
            try store.recordShown("m1", for: ["m1"], by: .extension, as: writer)
            _ = try store.claimNotification("m0", for: ["m0"], by: .app, as: writer)
            await writer.release()
            let fetcher = FakeMessageFetcher()
            for id in ["m0", "m1", "m2"] { fetcher.answer(id, body: "text \(id)") }
            var push = Self.push(ids: ["m0", "m1", "m2"])
            push.identifier = "m1"  // apns-collapse-id: the first unseen message's id
            let outcome = await handler(fetcher, store: store, lock: lock).handle(push)
            #expect(outcome.content?.body == "text m1\ntext m2", "m0 shows in a notification of its own")
            #expect(outcome.content?.userInfo["beckon"]?["ids"] == ["m1", "m2"])
            #expect(try store.ledgerEntry(messageID: "m2")?.notificationID == "m1")
            #expect(try store.ledgerEntry(messageID: "m0")?.notificationID == "m0")
        }
    }

    @Test func sealedContentNeedsNoFetch() async throws {
        let key = Data(repeating: 1, count: 32)
        let sealed = try ContentSeal.seal(SealedContent(messageID: "m1", title: "Bob", body: "secret"), key: key)
        let fetcher = FakeMessageFetcher()
        let outcome = await handler(fetcher, configure: { $0.sealKey = key }).handle(Self.push(ids: ["m1"], sealed: sealed))
        #expect(outcome.content?.body == "secret")
        #expect(fetcher.requested.isEmpty)
    }

    @Test func sealedContentThatDoesNotOpenFallsBackToTheFetch() async throws {
        let sealed = try ContentSeal.seal(SealedContent(messageID: "m1", body: "secret"), key: Data(repeating: 1, count: 32))
        let fetcher = FakeMessageFetcher()
        fetcher.answer("m1", body: "fetched")
        let wrongKey = Data(repeating: 2, count: 32)
        let outcome = await handler(fetcher, configure: { $0.sealKey = wrongKey }).handle(Self.push(ids: ["m1"], sealed: sealed))
        #expect(outcome.content?.body == "fetched")
    }

    @Test func aFailedFetchShowsThePushsOwnText() async throws {
        let fetcher = FakeMessageFetcher()
        fetcher.fail("m1", .transport("offline"))
        let outcome = await handler(fetcher).handle(Self.push(ids: ["m1"]))
        guard case .fallback(let content, .fetchFailed) = outcome else { Issue.record("\(outcome)"); return }
        #expect(content.locKey == "BECKON_NEW_MESSAGE")
    }

    @Test func aPushWithoutTextIsNeverShownBlank() async throws {
        let fetcher = FakeMessageFetcher()
        let outcome = await handler(fetcher).handle(Self.push(ids: ["m1"], alert: [:]))
        #expect(outcome.content?.hasText == true)
        #expect(outcome.content?.locKey == "BECKON_NEW_MESSAGE")
        let notOurs = await handler(fetcher).handle(IncomingNotification(identifier: "x", payload: ["aps": ["alert": "Hi"]]))
        #expect(notOurs == .fallback(NotificationContent(body: "Hi"), .notBeckon))
    }

    @Test func aMessageLargerThanTheBudgetIsNotLoaded() async throws {
        let fetcher = FakeMessageFetcher()
        fetcher.answer("m1", bytes: 5 << 20)  // deltachat-ios #2477: a ~5 MB message
        let outcome = await handler(fetcher).handle(Self.push(ids: ["m1"]))
        guard case .fallback(_, .tooLarge) = outcome else { Issue.record("\(outcome)"); return }
    }

    @Test func lowMemoryStopsBeforeLoading() async throws {
        let fetcher = FakeMessageFetcher()
        fetcher.answer("m1")
        let outcome = await handler(fetcher, memory: 4 << 20).handle(Self.push(ids: ["m1"]))
        guard case .fallback(_, .lowMemory) = outcome else { Issue.record("\(outcome)"); return }
        #expect(fetcher.requested.isEmpty)
    }

    @Test func theDeadlineDeliversThePushsTextOnceBeforeIOSWould() async throws {
        let clock = ManualClock()
        let fetcher = FakeMessageFetcher()
        fetcher.answer("m1")
        fetcher.delay = (.seconds(60), clock)  // the server never answers in time
        let delivered = DeliveryLog()
        let deadline = clock.now().addingTimeInterval(25)
        handler(fetcher, clock: clock).receive(Self.push(ids: ["m1"])) { delivered.record($0, at: clock.now()) }
        try await eventually("the deadline timer") { clock.sleeperDeadlines.contains(deadline) }
        clock.advance(by: .seconds(25))
        try await eventually("delivered") { !delivered.outcomes.isEmpty }
        guard case .fallback(_, .deadline)? = delivered.outcomes.first else { Issue.record("\(delivered.outcomes)"); return }
        #expect(delivered.firstAt == deadline, "at 25 s, before iOS's 30")
        clock.advance(by: .seconds(60))
        try await Task.sleep(for: .milliseconds(20))
        #expect(delivered.outcomes.count == 1, "exactly once")
    }

    @Test func iOSExpiryDeliversTheBestSoFarOnce() async throws {
        let clock = ManualClock()
        let fetcher = FakeMessageFetcher()
        fetcher.answer("m1")
        fetcher.delay = (.seconds(60), clock)
        let delivered = DeliveryLog()
        let run = handler(fetcher, clock: clock).receive(Self.push(ids: ["m1"])) { delivered.record($0, at: clock.now()) }
        run.timeWillExpire()
        run.timeWillExpire()
        #expect(delivered.outcomes.count == 1)
        guard case .fallback(_, .timeWillExpire)? = run.outcome else { Issue.record("\(String(describing: run.outcome))"); return }
    }

    @Test func theAppsRendererWritesTextWhenTheMessageHasNoHints() async throws {
        let fetcher = FakeMessageFetcher()
        fetcher.answer("m1", title: nil, body: nil, payload: ["text": "from the payload"])
        let outcome = await handler(fetcher, renderer: { NotificationContent(body: $0.payload?["text"]?.stringValue) })
            .handle(Self.push(ids: ["m1"]))
        #expect(outcome.content?.body == "from the payload")
        let noRenderer = await handler(fetcher).handle(Self.push(ids: ["m1"]))
        guard case .fallback(_, .nothingToShow) = noRenderer else { Issue.record("\(noRenderer)"); return }
    }

    @Test func whatTheExtensionShowedTheAppNeverShowsAgain() async throws {
        let clock = ManualClock()
        let test = try TestStore()
        defer { test.remove() }
        let nseStore = try test.open(clock: clock)
        let nseLock = LeaseLock(store: nseStore, holder: LeaseHolder(role: .extension), clock: clock)
        let fetcher = FakeMessageFetcher()
        fetcher.answer("m1")
        let outcome = await handler(fetcher, clock: clock, store: nseStore, lock: nseLock).handle(Self.push(ids: ["m1"]))
        #expect(outcome.content?.body == "Hello")
        let entry = try nseStore.ledgerEntry(messageID: "m1")
        #expect(entry?.shownBy == .extension)
        #expect(try nseStore.message(id: "m1") != nil, "kept for the app")

        // The app syncs it later: stored once, not notified.
        let appStore = try test.open(clock: clock)
        let appLock = LeaseLock(store: appStore, holder: LeaseHolder(role: .app), clock: clock)
        let writer = try await appLock.acquire(timeout: .seconds(1))
        let center = FakeNotificationCenter()
        let presenter = NotificationPresenter(store: appStore, center: center, role: .app, clock: clock)
        let synced = SyncMessage(sequence: 1, id: "m1", kind: .message, payload: [], createdAt: clock.now())
        let stored = try appStore.storeSynced(synced, as: writer)
        #expect(!stored.isNew)
        #expect(await presenter.present(synced, as: writer) == false)
        #expect(await center.added.isEmpty)
        await writer.release()
    }

    @Test func withTheFilteringEntitlementAMessageAlreadyHandledIsSuppressed() async throws {
        try await TestStore.withWriter { store, writer, lock in
            _ = try store.storeSynced(SyncMessage(sequence: 1, id: "m1", kind: .message, payload: [], createdAt: Date(), read: true), as: writer)
            await writer.release()
            let fetcher = FakeMessageFetcher()
            let filtering = handler(fetcher, configure: { $0.canSuppress = true }, store: store, lock: lock)
            #expect(await filtering.handle(Self.push(ids: ["m1"])) == .suppressed)
            let plain = handler(fetcher, store: store, lock: lock)
            #expect(await plain.handle(Self.push(ids: ["m1"])) != .suppressed, "without the entitlement something shows")
        }
    }

    @Test func whenTheAppHoldsTheLeaseTheExtensionStillShowsTheMessage() async throws {
        let clock = ManualClock()
        try await TestStore.withWriter(clock: clock) { store, _, _ in
            // The app holds the lease (the writer above); the extension waits only briefly.
            let nseLock = LeaseLock(store: store, holder: LeaseHolder(role: .extension), clock: clock)
            let fetcher = FakeMessageFetcher()
            fetcher.answer("m1")
            let delivered = DeliveryLog()
            handler(fetcher, clock: clock, configure: { $0.leaseWait = .milliseconds(300) }, store: store, lock: nseLock)
                .receive(Self.push(ids: ["m1"])) { delivered.record($0, at: clock.now()) }
            try await clock.advance(by: .milliseconds(50), until: "delivered") { !delivered.outcomes.isEmpty }
            #expect(delivered.outcomes.first?.content?.body == "Hello")
            let entry = try store.ledgerEntry(messageID: "m1")
            #expect(entry == nil, "the app records it when iOS shows it (willPresent)")
        }
    }

    @Test func iOSsExpiryFromAnotherThreadDeliversOnceThroughTheRequest() async throws {
        // `didReceive` and `serviceExtensionTimeWillExpire` come on threads of iOS's choosing:
        // the request they share is behind a lock (`NotificationServiceRequest`).
        let clock = ManualClock()
        let fetcher = FakeMessageFetcher()
        fetcher.delay = (.seconds(60), clock)  // the network never answers
        let extensionHandler = handler(fetcher, clock: clock)
        let delivered = Locked<[NotificationServiceOutcome]>([])
        for _ in 0..<50 {
            let request = NotificationServiceRequest()
            let expired = Task.detached { request.timeWillExpire() }
            request.receive(Self.push(ids: ["m1"]), with: extensionHandler) { outcome in delivered.withLock { $0.append(outcome) } }
            await expired.value
            request.timeWillExpire()
        }
        try await eventually("every request delivered") { delivered.withLock { $0.count } == 50 }
        #expect(delivered.withLock { $0 }.allSatisfy { if case .fallback(_, .timeWillExpire) = $0 { true } else { false } })
    }
}

final class DeliveryLog: @unchecked Sendable {
    private let lock = NSLockBox()
    private var entries: [(NotificationServiceOutcome, Date)] = []
    var outcomes: [NotificationServiceOutcome] { lock.run { entries.map(\.0) } }
    var firstAt: Date? { lock.run { entries.first?.1 } }
    func record(_ outcome: NotificationServiceOutcome, at date: Date) { lock.run { entries.append((outcome, date)) } }
}
