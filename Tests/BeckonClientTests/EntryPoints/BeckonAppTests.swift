@testable import BeckonClient
import BeckonClientTestSupport
import BeckonJSON
import BeckonProtocol
import Foundation
import Testing

/// The app's entry points carried out through the ports (seed 001), on a manual clock.
@Suite struct BeckonAppTests {
    @Test func aBackgroundPushSyncsNotifiesAndCompletesOnceWithNewData() async throws {
        let harness = try AppHarness.make()
        defer { harness.test.remove() }
        harness.app.handle(.didFinishLaunching(remoteNotification: nil))
        let recorder = try await harness.wake(lastSequence: 2, badge: 2, messages: [1, 2], snapshot: harness.cleanupState)
        #expect(recorder.results == [.newData])
        // iOS may suspend the app the moment the handler returns (apns.md E.9): everything is
        // done by then.
        #expect(recorder.seenAtCall == "bye sent, lease free")
        #expect(await harness.center.delivered.count == 2)
        #expect(await harness.center.badge == 2)
        #expect(recorder.results == [.newData], "once")
    }

    /// One stream for the app, whichever session brings the news; it outlives them.
    @Test func updatesCarryEverySessionsEvents() async throws {
        let harness = try AppHarness.make()
        defer { harness.test.remove() }
        let updates = await harness.app.updates()
        let seen = Locked<[SyncSessionEvent]>([])
        let reader = Task { for await event in updates { seen.withLock { $0.append(event) } } }
        defer { reader.cancel() }
        _ = try await harness.wake(lastSequence: 2, badge: 2, messages: [1, 2])
        try await eventually("two messages, then the stop") {
            let events = seen.withLock { $0 }
            let stored = events.filter { if case .stored(_, isNew: true) = $0 { true } else { false } }
            return stored.count == 2 && events.contains { if case .stopped = $0 { true } else { false } }
        }
        #expect(seen.withLock { $0 }.contains { if case .connected = $0 { true } else { false } })
    }

    /// A status line follows the app's connection: idle until a session starts, connecting,
    /// connected, connecting again after a drop, and idle once the app leaves.
    @Test func theConnectionStateFollowsTheAppsSession() async throws {
        let harness = try AppHarness.make()
        defer { harness.test.remove() }
        let states = Locked<[ConnectionState]>([])
        let stream = await harness.app.connectionStates()
        let reader = Task { for await state in stream { states.withLock { $0.append(state) } } }
        defer { reader.cancel() }
        try await eventually("the state now, at once") { states.withLock { $0 } == [.idle] }
        harness.app.handle(.didFinishLaunching(remoteNotification: nil))
        harness.app.handle(.willEnterForeground)
        harness.app.handle(.didBecomeActive)
        let first = try await harness.serve(0, lastSequence: 0)
        try await eventually("connected") { await harness.app.connectionState == .connected }
        first.serverClose(1006)  // the network drops
        try await eventually("reconnecting") { await harness.app.connectionState == .connecting }
        try await harness.clock.advance(by: .milliseconds(100), until: "the next attempt") { harness.transport.attemptCount == 2 }
        let second = try await harness.serve(1, lastSequence: 0)
        try await eventually("connected again") { await harness.app.connectionState == .connected }
        harness.app.handle(.willResignActive)
        harness.app.handle(.didEnterBackground)
        try await harness.closeAfterBye(second)
        try await eventually("idle once the app left") { await harness.app.connectionState == .idle }
        try await eventually("every change streamed") {
            states.withLock { $0 } == [.idle, .connecting, .connected, .connecting, .connected, .idle]
        }
    }

    @Test func nothingNewIsNoData() async throws {
        let harness = try AppHarness.make()
        defer { harness.test.remove() }
        let recorder = try await harness.wake(lastSequence: 0)
        #expect(recorder.results == [.noData])
    }

    @Test func theCompletionHandlerIsCalledByTheInternalDeadlineWhateverHappens() async throws {
        let harness = try AppHarness.make()
        defer { harness.test.remove() }
        harness.transport.failNext(1000)  // the network is down
        let recorder = CompletionRecorder(clock: harness.clock)
        let start = harness.clock.now()
        harness.app.handle(.didReceiveRemoteNotification(AppHarness.wake, state: .background, completion: recorder.completion))
        let deadline = start.addingTimeInterval(25)
        try await eventually("the deadline timer") { harness.clock.sleeperDeadlines.contains(deadline) }
        harness.clock.advance(by: .seconds(25))
        try await eventually("completed") { !recorder.results.isEmpty }
        #expect(recorder.results == [.failed])
        #expect(recorder.calledAt == deadline, "at the internal deadline, inside iOS's 30 s")
        harness.clock.advance(by: .seconds(60))
        #expect(recorder.results == [.failed], "once")
    }

    @Test func pushesDuringARunShareItAndEachCompletesOnce() async throws {
        let harness = try AppHarness.make()
        defer { harness.test.remove() }
        let first = CompletionRecorder(clock: harness.clock)
        let second = CompletionRecorder(clock: harness.clock)
        harness.app.handle(.didReceiveRemoteNotification(AppHarness.wake, state: .background, completion: first.completion))
        let connection = try await harness.transport.connection(0)
        harness.app.handle(.didReceiveRemoteNotification(AppHarness.wake, state: .background, completion: second.completion))
        await harness.app.settled()
        try await connection.waitForSent("hello") { if case .hello = $0 { true } else { false } }
        connection.welcome(lastSequence: 1)
        connection.message(1)
        try await harness.closeAfterBye(connection)
        try await eventually("both completed") { !first.results.isEmpty && !second.results.isEmpty }
        #expect(first.results == [.newData] && second.results == [.newData])
        #expect(harness.transport.attemptCount == 1)
    }

    @Test func aTapBeforeTheAppIsReadyIsKeptAndOpenedOnce() async throws {
        let harness = try AppHarness.make()
        defer { harness.test.remove() }
        let alert: JSONValue = [
            "aps": ["alert": ["loc-key": "BECKON_NEW_MESSAGE"], "thread-id": "t7"], "beckon": ["reason": "alert", "ids": ["m9"]],
        ]
        let recorder = CompletionRecorder(clock: harness.clock)
        let taps = TapRecorder()
        harness.app.handle(.didFinishLaunching(remoteNotification: alert))
        harness.app.handle(.didReceiveRemoteNotification(alert, state: .inactive, completion: recorder.completion))
        // The same tap, also reported by the notification centre's delegate.
        harness.app.handle(.notificationResponse(NotificationResponse(identifier: "m9", userInfo: alert, action: .open)))
        await harness.app.settled()
        #expect(recorder.results == [.noData], "a tap: nothing to fetch in the background")
        #expect(harness.transport.attemptCount == 0)
        harness.app.handle(.ready(open: taps.open))
        harness.app.handle(.ready(open: taps.open))
        await harness.app.settled()
        #expect(taps.taps.map(\.threadID) == ["t7"])
    }

    @Test func inFrontASessionRunsAndLeavingItSaysByeAndLetsGo() async throws {
        let harness = try AppHarness.make()
        defer { harness.test.remove() }
        harness.app.handle(.didFinishLaunching(remoteNotification: nil))
        harness.app.handle(.willEnterForeground)
        harness.app.handle(.didBecomeActive)
        let connection = try await harness.serve(0, lastSequence: 1, messages: [1])
        try await connection.waitForSent("hello as the app") { if case .hello(_, .app, _, _) = $0 { true } else { false } }
        try await connection.waitForSent("ack") { $0 == .ack(upTo: 1) }
        #expect(await harness.center.added.isEmpty, "in front the app shows messages itself")
        let m1: JSONValue = ["beckon": ["reason": "alert", "ids": ["m1"]]]
        #expect(await harness.app.willPresent(identifier: "m1", userInfo: m1) == .hide)
        harness.app.handle(.willResignActive)
        harness.app.handle(.didEnterBackground)
        try await harness.closeAfterBye(connection)
        try await eventually("lease released") { try harness.leaseHolder() == nil }
        try await eventually("background task ended") { harness.backgroundTime.begun == 1 && harness.backgroundTime.openTasks == 0 }
    }

    @Test func aPushWhileInactiveButInFrontUsesTheLiveSession() async throws {
        let harness = try AppHarness.make()
        defer { harness.test.remove() }
        harness.app.handle(.didBecomeActive)
        let connection = try await harness.serve(0, lastSequence: 0)
        try await eventually("foreground session") { await harness.app.foregroundSession != nil }
        // The app switcher: inactive, not starting (seed 001); a push arrives.
        harness.app.handle(.willResignActive)
        let recorder = CompletionRecorder(clock: harness.clock)
        harness.app.handle(.didReceiveRemoteNotification(AppHarness.wake, state: .inactive, completion: recorder.completion))
        try await eventually("completed") { !recorder.results.isEmpty }
        #expect(recorder.results == [.noData])
        #expect(harness.transport.attemptCount == 1, "no second session to replace the live one")
        harness.app.handle(.didEnterBackground)
        try await harness.closeAfterBye(connection)
    }

    @Test func readingInTheAppTellsTheServerRemovesTheNotificationAndLowersTheBadge() async throws {
        let harness = try AppHarness.make()
        defer { harness.test.remove() }
        // Shown while in the background.
        _ = try await harness.wake(lastSequence: 2, badge: 2, messages: [1, 2])
        #expect(await harness.center.delivered.count == 2)
        // Opened.
        harness.app.handle(.didBecomeActive)
        let foreground = try await harness.serve(1, lastSequence: 2, badge: 2)
        try await eventually("foreground session") { await harness.app.foregroundSession != nil }
        #expect(await harness.app.foregroundSession?.untilCaughtUp() == true)
        try await harness.app.markRead([ScriptedConnection.id(1)])
        try await foreground.waitForSent("read") { $0 == .read(ids: [ScriptedConnection.id(1)]) }
        #expect(await harness.center.deliveredIdentifiers() == [ScriptedConnection.id(2)])
        #expect(await harness.center.badge == 1)
    }

    @Test func aClearPushRemovesThoseNotificationsAtOnce() async throws {
        let harness = try AppHarness.make()
        defer { harness.test.remove() }
        await harness.center.show("m0")
        await harness.center.show("m5")
        let clear: JSONValue = ["aps": ["content-available": 1], "beckon": ["reason": "clear", "clear": ["m0"], "badge": 1]]
        let recorder = CompletionRecorder(clock: harness.clock)
        harness.app.handle(.didReceiveRemoteNotification(clear, state: .background, completion: recorder.completion))
        try await eventually("m0 removed") { await harness.center.deliveredIdentifiers() == ["m5"] }
        #expect(await harness.center.badge == 1)
        let connection = try await harness.serve(0, lastSequence: 0)
        try await harness.closeAfterBye(connection)
        try await eventually("completed") { !recorder.results.isEmpty }
    }

    @Test func theBadgeZeroPushLeavesTheLedgerEmpty() async throws {
        let harness = try AppHarness.make()
        defer { harness.test.remove() }
        _ = try await harness.wake(lastSequence: 2, messages: [1, 2])
        #expect(try harness.store.showingNotifications().count == 2)
        let clearAll = CompletionRecorder(clock: harness.clock)
        harness.app.handle(.didReceiveRemoteNotification(["aps": ["badge": 0]], state: .background, completion: clearAll.completion))
        await harness.app.settled()
        #expect(clearAll.results == [.noData])
        let showing = try harness.store.showingNotifications()
        #expect(showing.isEmpty)
        #expect(await harness.center.delivered.isEmpty)
    }

    @Test func aBadgeZeroPushTheAppNeverSawIsReconciledWhenItComesToTheFront() async throws {
        let harness = try AppHarness.make()
        defer { harness.test.remove() }
        _ = try await harness.wake(lastSequence: 1, messages: [1])
        await harness.center.setBadge(0)  // iOS applied {"aps":{"badge":0}}; the app was not woken
        harness.app.handle(.willEnterForeground)
        await harness.app.settled()
        let showing = try harness.store.showingNotifications()
        #expect(showing.isEmpty)
    }

    @Test func theAppPreemptsAnExtensionThatIsSyncing() async throws {
        let harness = try AppHarness.make()
        defer { harness.test.remove() }
        // The extension process: its own lock and transport over the same store file.
        let nseStore = try harness.test.open(clock: harness.clock)
        let nseLock = LeaseLock(
            store: nseStore, holder: LeaseHolder(role: .extension), clock: harness.clock, signal: harness.signal)
        let nseTransport = ScriptedTransport()
        let sync = ExtensionSync(
            endpoint: SessionHarness.endpoint, store: nseStore, lock: nseLock, transport: nseTransport, clock: harness.clock)
        let extensionRun = Task { await sync.run(leaseWait: .seconds(5), deadline: .seconds(25)) }
        let nseConnection = try await nseTransport.connection(0)
        try await nseConnection.waitForSent("hello as extension") { if case .hello(_, .extension, _, _) = $0 { true } else { false } }
        nseConnection.welcome(lastSequence: 5)
        nseConnection.message(1)
        try await nseConnection.waitForSent("ack") { $0 == .ack(upTo: 1) }
        // The user opens the app.
        harness.app.handle(.didBecomeActive)
        try await harness.clock.advance(by: .milliseconds(10), until: "the app's session connects") {
            !harness.transport.connections.isEmpty
        }
        #expect(await extensionRun.value == .preempted(newMessages: 1))
        #expect(nseConnection.closedByClient == 1000)
        let appConnection = try await harness.transport.connection(0)
        try await appConnection.waitForSent("hello from the extension's cursor") {
            $0 == .hello(version: 2, role: .app, cursor: 1, window: nil)
        }
    }

    @Test func aRingingCallKeepsASessionOpenUntilItsEndArrives() async throws {
        let harness = try AppHarness.make()
        defer { harness.test.remove() }
        let callID = "0b3c9a8e-8a77-4f53-b1f4-2f3f4e0e8c11"
        let payload: JSONValue = ["beckon": ["reason": "call-voip", "call": .string(callID), "ids": [.string(callID)]]]
        // Launched in the background by PushKit: the call rings, and a session opens for its end.
        harness.app.receiveVoIPPush(payload) { .incoming($0) }
        let connection = try await harness.serve(0, lastSequence: 0)
        // Caught up, yet the session stays while the call rings, in a background task: iOS must
        // not suspend the app while it writes (apns.md E.9).
        try await harness.clock.advance(by: .seconds(1), until: "a few seconds pass") { harness.clock.now() > Date(timeIntervalSince1970: 1_700_000_005) }
        #expect(connection.closedByClient == nil)
        #expect(harness.backgroundTime.openTasks == 1)
        // Answered on another device: CallKit's call ends, then the session says bye.
        connection.server(.callEnded(callID: callID, outcome: .answeredElsewhere))
        try await harness.clock.advance(by: .seconds(1), until: "bye") { connection.sent.contains(.bye) }
        connection.serverClose(1000)
        #expect(harness.reporter.ends.map(\.outcome) == [.answeredElsewhere])
        try await eventually("the background task ended") { harness.backgroundTime.openTasks == 0 }
    }

    @Test func aWakeDuringARingingCallSharesItsSession() async throws {
        let harness = try AppHarness.make()
        defer { harness.test.remove() }
        let callID = "0b3c9a8e-8a77-4f53-b1f4-2f3f4e0e8c11"
        let payload: JSONValue = ["beckon": ["reason": "call-voip", "call": .string(callID), "ids": [.string(callID)]]]
        harness.app.receiveVoIPPush(payload) { .incoming($0) }
        let connection = try await harness.serve(0, lastSequence: 0)
        // A wake push while the call rings: one app session per process, or the server replaces
        // one with the other (4001) and they take turns closing each other.
        let recorder = CompletionRecorder(clock: harness.clock)
        harness.app.handle(.didReceiveRemoteNotification(AppHarness.wake, state: .background, completion: recorder.completion))
        try await eventually("completed") { !recorder.results.isEmpty }
        #expect(recorder.results == [.noData])
        #expect(harness.transport.attemptCount == 1, "the ringing session carried it")
        #expect(connection.closedByClient == nil && !connection.sent.contains(.bye), "still ringing")
        connection.server(.callEnded(callID: callID, outcome: .declined))
        try await harness.clock.advance(by: .seconds(1), until: "bye") { connection.sent.contains(.bye) }
        connection.serverClose(1000)
    }

    @Test func theBackgroundTaskEndsInsideItsExpirationHandler() async throws {
        let harness = try AppHarness.make()
        defer { harness.test.remove() }
        harness.app.handle(.didBecomeActive)
        let connection = try await harness.serve(0, lastSequence: 0)
        try await eventually("foreground session") { await harness.app.foregroundSession != nil }
        harness.app.handle(.willResignActive)
        harness.app.handle(.didEnterBackground)
        #expect(harness.backgroundTime.openTasks == 1, "begun while UIKit's callback runs")
        try await connection.waitForSent("bye") { $0 == .bye }
        // The server never answers the bye, and iOS wants the time back: Apple terminates an app
        // whose expiration handler returns with its task open (apns.md E.9).
        #expect(harness.backgroundTime.expireAll() == [])
        try await eventually("the session stopped at once") { connection.closedByClient != nil }
    }

    @Test func theAppFollowsUIKitsNotificationsWithoutDelegateCalls() async throws {
        let harness = try AppHarness.make()
        defer { harness.test.remove() }
        // A scene-based app (every SwiftUI app): UIKit calls none of the app delegate's
        // lifecycle methods, but posts its notifications (apns.md E.9).
        let lifecycle = FakeLifecycle()
        harness.app.observeLifecycle(lifecycle)
        lifecycle.post(.willEnterForeground)
        lifecycle.post(.didBecomeActive)
        let connection = try await harness.serve(0, lastSequence: 0)
        try await connection.waitForSent("hello as the app") { if case .hello(_, .app, _, _) = $0 { true } else { false } }
        lifecycle.post(.willResignActive)
        lifecycle.post(.didEnterBackground)
        try await harness.closeAfterBye(connection)
        try await eventually("lease released") { try harness.leaseHolder() == nil }
    }

    @Test func theAppKeepsItsLifecyclePortAlive() async throws {
        let harness = try AppHarness.make()
        defer { harness.test.remove() }
        // As the bridge does: a port nobody else keeps, whose observers go when it goes.
        let center = LifecycleCenter()
        harness.app.observeLifecycle(ScopedLifecycle(center: center))
        center.post(.didBecomeActive)
        let connection = try await harness.serve(0, lastSequence: 0)
        try await connection.waitForSent("hello as the app") { if case .hello(_, .app, _, _) = $0 { true } else { false } }
    }

    @Test func theAppsOwnNotificationsAreTheAppsToPresent() async throws {
        let harness = try AppHarness.make()
        defer { harness.test.remove() }
        harness.app.handle(.didBecomeActive)
        _ = try await harness.serve(0, lastSequence: 0)
        try await eventually("foreground session") { await harness.app.foregroundSession != nil }
        let reminder: JSONValue = ["kind": "reminder"]
        #expect(await harness.app.willPresent(identifier: "reminder-1", userInfo: reminder) == .notBeckon)
    }

    @Test func theMarkReadActionMarksTheNotificationsMessagesRead() async throws {
        let harness = try AppHarness.make()
        defer { harness.test.remove() }
        _ = try await harness.wake(lastSequence: 2, badge: 2, messages: [1, 2])
        let first = ScriptedConnection.id(1)
        let userInfo: JSONValue = ["beckon": ["reason": "alert", "ids": [.string(first)]]]
        await harness.app.respond(
            to: NotificationResponse(identifier: first, userInfo: userInfo, action: .custom(NotificationResponse.markReadAction, text: nil)))
        #expect(await harness.center.deliveredIdentifiers() == [ScriptedConnection.id(2)])
        #expect(await harness.center.badge == 1)
        #expect(try harness.store.message(id: first)?.isRead == true)
    }

    @Test func theAppsOwnActionsGoToItsHandler() async throws {
        let harness = try AppHarness.make()
        defer { harness.test.remove() }
        let seen = ActionRecorder()
        await harness.app.setActionHandler { response in seen.record(response) }
        let reply = NotificationResponse(identifier: "m3", userInfo: [:], action: .custom("REPLY", text: "on my way"))
        await harness.app.respond(to: reply)
        #expect(seen.responses == [reply], "handled before `respond` returns, so iOS's completion comes after")
    }

    @Test func tapsAreOpenedOnTheMainActor() async throws {
        let harness = try AppHarness.make()
        defer { harness.test.remove() }
        let onMain = ActionRecorder()
        harness.app.handle(.ready(open: { tap in
            MainActor.assertIsolated()
            onMain.record(NotificationResponse(identifier: tap.identifier ?? "", userInfo: tap.payload, action: .open))
        }))
        await harness.app.respond(to: NotificationResponse(identifier: "m4", userInfo: [:], action: .open))
        #expect(onMain.responses.map(\.identifier) == ["m4"])
    }

    /// A tap takes the notification off the screen before the app becomes active, so the
    /// reconcile at `didBecomeActive` cannot find an alert iOS showed by itself: the tap records it.
    @Test func aTapOnAnAlertIOSShowedByItselfReportsItShownAtItsDeliveryAndOpened() async throws {
        let harness = try AppHarness.make()
        defer { harness.test.remove() }
        let delivered = Date(timeIntervalSince1970: 1_800_000_000)
        let payload: JSONValue = [BeckonPushPayload.key: BeckonPushPayload(reason: .unreachableAlert, ids: ["m1", "m2"]).json]
        await harness.app.respond(to: NotificationResponse(identifier: "m2", userInfo: payload, action: .open, date: delivered))
        let pending = try harness.store.pendingReceipts()
        for id in ["m1", "m2"] {
            #expect(pending.contains(SyncReceipt(messageID: id, kind: .shown, at: delivered)))
            #expect(pending.contains { $0.messageID == id && $0.kind == .opened })
            #expect(try harness.store.ledgerEntry(messageID: id) != nil, "in the ledger: never shown again")
        }
    }

    @Test func aNotificationTheLedgerKnowsGetsNoSecondShown() async throws {
        let harness = try AppHarness.make()
        defer { harness.test.remove() }
        let first = Date(timeIntervalSince1970: 1_800_000_000)
        await harness.app.respond(to: NotificationResponse(identifier: "m1", userInfo: [:], action: .dismiss, date: first))
        await harness.app.respond(
            to: NotificationResponse(identifier: "m1", userInfo: [:], action: .open, date: first.addingTimeInterval(60)))
        #expect(try harness.store.pendingReceipts().filter { $0.kind == .shown }.map(\.at) == [first])
    }

    @Test func aCallBeforeTheFirstUnlockIsReportedAndStopsRingingAtTheLimit() async throws {
        // After a restart, before the first unlock, iOS may launch the app for a VoIP push; the
        // store and the keychain cannot be read then (apns.md E.9).
        let unlocked = Locked(false)
        let harness = try AppHarness.make(unlocked: { unlocked.withLock { $0 } }) {
            $0.credentials = UnreadableCredential()
        }
        defer { harness.test.remove() }
        let callID = "0b3c9a8e-8a77-4f53-b1f4-2f3f4e0e8c11"
        let payload: JSONValue = [
            "beckon": ["reason": "call-voip", "call": .string(callID), "ids": [.string(callID)], "hints": ["title": "Anna"]],
        ]
        let completed = Flag()
        let report = harness.app.receiveVoIPPush(payload, handler: { .incoming($0) }, completion: { completed.set() })
        #expect(report.kind == .incoming && report.display.callerName == "Anna", "from the push alone")
        #expect(harness.reporter.reports.count == 1 && completed.isSet)
        #expect(!harness.store.isAvailable)
        // No session can hear the call's end: it rings until the limit, then ends as missed.
        try await harness.clock.advance(by: .seconds(1), until: "the ringing limit") { !harness.reporter.ends.isEmpty }
        #expect(harness.reporter.ends.map(\.outcome) == [.missed])
        #expect(harness.transport.attemptCount == 0)
        // Unlocked: the store opens at its next use, and the app syncs as usual.
        unlocked.withLock { $0 = true }
        #expect(harness.store.isAvailable)
    }
}

/// The keychain before the first unlock.
struct UnreadableCredential: CredentialSource {
    struct Locked: Error {}
    func credential() throws -> String { throw Locked() }
}

/// Records notification responses.
final class ActionRecorder: @unchecked Sendable {
    private let lock = NSLockBox()
    private var _responses: [NotificationResponse] = []
    var responses: [NotificationResponse] { lock.run { _responses } }
    func record(_ response: NotificationResponse) { lock.run { _responses.append(response) } }
}
