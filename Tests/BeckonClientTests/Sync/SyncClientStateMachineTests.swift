import BeckonClient
import BeckonClientTestSupport
import BeckonProtocol
import Foundation
import Testing

/// The session's decisions alone: no socket, no store, no clock.
@Suite struct SyncClientStateMachineTests {
    typealias Machine = SyncClientStateMachine

    static func message(_ sequence: Int64, read: Bool = false, kind: MessageKind = .message) -> SyncMessage {
        SyncMessage(sequence: sequence, id: "m\(sequence)", kind: kind, payload: [], createdAt: Date(timeIntervalSince1970: 0), read: read)
    }

    func streaming(cursor: Int64 = 3, last: Int64 = 5, badge: Int = 2, role: SyncRole = .app) -> Machine {
        var machine = Machine(role: role, window: 50, jitter: JitterSource(seed: 1))
        _ = machine.handle(.start)
        _ = machine.handle(.transportOpened(cursor: cursor))
        _ = machine.handle(.frame(.welcome(version: 2, sessionID: "s", lastSequence: last, window: 50, badge: badge)))
        return machine
    }

    @Test func helloResumesFromTheStoredCursorWithRoleAndWindow() {
        var machine = Machine(role: .extension, window: 50, jitter: JitterSource(seed: 1))
        #expect(machine.handle(.start) == [.connect])
        #expect(machine.handle(.transportOpened(cursor: 41)) == [.send(.hello(version: 2, role: .extension, cursor: 41, window: 50))])
    }

    @Test func welcomeSetsTheBadgeAndSendsPendingReads() {
        var machine = Machine(role: .app, jitter: JitterSource(seed: 1))
        _ = machine.handle(.start)
        _ = machine.handle(.transportOpened(cursor: 3))
        let effects = machine.handle(.frame(.welcome(version: 2, sessionID: "s", lastSequence: 5, window: 100, badge: 4)))
        #expect(effects == [.setBadge(4), .sendPendingReads])
    }

    /// Receipts go only to a server whose welcome lists them (an older v2 server would close on
    /// a frame type it does not know); then at welcome and whenever more are queued.
    @Test func receiptsGoOnlyToAServerThatTakesThem() {
        var older = Machine(role: .app, jitter: JitterSource(seed: 1))
        _ = older.handle(.start)
        _ = older.handle(.transportOpened(cursor: 3))
        _ = older.handle(.frame(.welcome(version: 2, sessionID: "s", lastSequence: 3, window: 100, badge: 0)))
        #expect(older.handle(.receiptsQueued).isEmpty)

        var newer = Machine(role: .app, jitter: JitterSource(seed: 1))
        _ = newer.handle(.start)
        _ = newer.handle(.transportOpened(cursor: 3))
        let welcomed = newer.handle(.frame(.welcome(version: 2, sessionID: "s", lastSequence: 3, window: 100, badge: 0, features: ["receipts"])))
        #expect(welcomed.contains(.sendPendingReceipts))
        #expect(newer.handle(.receiptsQueued) == [.sendPendingReceipts])
    }

    /// A background sync shows notifications (`shown` receipts) and says `bye`: they go first.
    @Test func pendingReceiptsGoBeforeBye() {
        var machine = Machine(role: .app, jitter: JitterSource(seed: 1))
        _ = machine.handle(.start)
        _ = machine.handle(.transportOpened(cursor: 3))
        _ = machine.handle(.frame(.welcome(version: 2, sessionID: "s", lastSequence: 3, window: 100, badge: 0, features: ["receipts"])))
        #expect(machine.handle(.stop) == [.sendPendingReceipts, .send(.bye)])
    }

    @Test func aDeviceThatHasEverythingIsCaughtUpAtWelcome() {
        var machine = Machine(role: .app, jitter: JitterSource(seed: 1))
        _ = machine.handle(.start)
        _ = machine.handle(.transportOpened(cursor: 5))
        let effects = machine.handle(.frame(.welcome(version: 2, sessionID: "s", lastSequence: 5, window: 100, badge: 0)))
        #expect(effects.contains(.caughtUp))
    }

    @Test func theAckComesOnlyAfterTheCommit() {
        var machine = streaming()
        let received = machine.handle(.frame(.message(Self.message(4))))
        #expect(received == [.persist(Self.message(4))], "no ack before the write")
        let committed = machine.handle(.persisted(Self.message(4), isNew: true, isRead: false))
        #expect(committed.first == .send(.ack(upTo: 4)))
        #expect(committed.contains(.present(Self.message(4))))
    }

    @Test func aFailedWriteIsNeverAcknowledged() {
        var machine = streaming()
        _ = machine.handle(.frame(.message(Self.message(4))))
        let effects = machine.handle(.persistFailed(leaseLost: false))
        #expect(!effects.contains { if case .send(.ack) = $0 { true } else { false } })
        #expect(effects == [.close(code: 1011)])
    }

    @Test func losingTheLeaseStopsTheSession() {
        var machine = streaming()
        _ = machine.handle(.frame(.message(Self.message(4))))
        #expect(machine.handle(.persistFailed(leaseLost: true)) == [.close(code: 1000), .stopped(.leaseLost)])
    }

    @Test func aReadMessageNeverNotifiesAndIsCleared() {
        var machine = streaming()
        _ = machine.handle(.frame(.message(Self.message(4, read: true))))
        let effects = machine.handle(.persisted(Self.message(4, read: true), isNew: true, isRead: true))
        #expect(effects == [.send(.ack(upTo: 4)), .clearNotifications(["m4"], markRead: false)])
    }

    @Test func aDuplicateIsAcknowledgedButNotShownAgain() {
        var machine = streaming()
        _ = machine.handle(.frame(.message(Self.message(4))))
        #expect(machine.handle(.persisted(Self.message(4), isNew: false, isRead: false)) == [.send(.ack(upTo: 4))])
    }

    @Test func theBadgeCountsOnlyWhatTheWelcomeDidNot() {
        var machine = streaming(cursor: 3, last: 5, badge: 2)
        _ = machine.handle(.frame(.message(Self.message(5))))
        let missed = machine.handle(.persisted(Self.message(5), isNew: true, isRead: false))
        #expect(!missed.contains(.setBadge(3)), "message 5 is in the welcome's badge")
        #expect(missed.contains(.caughtUp))
        _ = machine.handle(.frame(.message(Self.message(6))))
        #expect(machine.handle(.persisted(Self.message(6), isNew: true, isRead: false)).contains(.setBadge(3)))
        _ = machine.handle(.frame(.message(Self.message(7, kind: .receipt))))
        #expect(!machine.handle(.persisted(Self.message(7, kind: .receipt), isNew: true, isRead: false)).contains(.setBadge(4)))
    }

    @Test func readElsewhereClearsAndSetsTheBadge() {
        var machine = streaming()
        #expect(machine.handle(.frame(.readElsewhere(ids: ["m1", "m2"], badge: 0))) == [
            .clearNotifications(["m1", "m2"], markRead: true), .setBadge(0),
        ])
    }

    @Test func callEndedEndsTheCall() {
        var machine = streaming()
        #expect(machine.handle(.frame(.callEnded(callID: "c1", outcome: .answeredElsewhere))) == [
            .endCall(callID: "c1", outcome: .answeredElsewhere),
        ])
    }

    @Test func readMarkersGoOutWhileConnected() {
        var machine = streaming()
        #expect(machine.handle(.markedRead(["m1"])) == [.send(.read(ids: ["m1"]))])
        var offline = Machine(role: .app, jitter: JitterSource(seed: 1))
        #expect(offline.handle(.markedRead(["m1"])) == [], "kept pending in the store; sent after welcome")
    }

    @Test func aDropReconnectsWithBackoffAndJitter() throws {
        var machine = streaming()
        let effects = machine.handle(.transportClosed(code: nil))
        guard case .scheduleReconnect(let delay)? = effects.first else { Issue.record("\(effects)"); return }
        #expect(delay >= .milliseconds(250) && delay <= .milliseconds(500))
        #expect(machine.handle(.reconnectDelayElapsed) == [.connect])
        // Failing again waits longer.
        let failed = machine.handle(.transportFailed)
        guard case .scheduleReconnect(let second)? = failed.first else { Issue.record("\(failed)"); return }
        #expect(second >= .milliseconds(500) && second <= .seconds(1))
    }

    @Test func reconnectNowSkipsTheRestOfTheBackoff() {
        var machine = streaming()
        _ = machine.handle(.transportClosed(code: nil))
        #expect(machine.handle(.reconnectNow) == [.connect])
        #expect(machine.handle(.reconnectNow) == [], "already connecting")
        #expect(machine.handle(.reconnectDelayElapsed) == [], "the old timer is late")
    }

    @Test(arguments: [
        (UInt16(4002), SyncStopReason.preempted), (4003, .revoked), (4008, .protocolError),
    ])
    func someClosesEndItForGood(code: UInt16, reason: SyncStopReason) {
        var machine = streaming()
        #expect(machine.handle(.transportClosed(code: code)) == [.stopped(reason)])
        #expect(machine.handle(.reconnectDelayElapsed) == [])
    }

    @Test(arguments: [UInt16(1000), 1001, 1011, 4001, 4029])
    func othersReconnect(code: UInt16) {
        var machine = streaming()
        let effects = machine.handle(.transportClosed(code: code))
        #expect(effects.count == 1)
        if case .scheduleReconnect = effects[0] {} else { Issue.record("\(effects)") }
    }

    @Test func stopSaysByeAndEndsAtTheClose() {
        var machine = streaming()
        #expect(machine.handle(.stop) == [.send(.bye)])
        #expect(machine.handle(.transportClosed(code: 1000)) == [.stopped(.requested)])
    }

    @Test func preemptionStopsAtOnce() {
        var machine = streaming(role: .extension)
        #expect(machine.handle(.preempt) == [.close(code: 1000), .stopped(.preempted)])
        #expect(machine.handle(.frame(.pong(id: nil))) == [])
    }

    @Test func aServerThatBreaksTheProtocolIsClosedAndRetried() {
        var machine = streaming()
        #expect(machine.handle(.unreadableFrame) == [.close(code: 1002)])
        #expect(machine.handle(.frame(.welcome(version: 2, sessionID: "x", lastSequence: 1, window: 1, badge: 0))) == [.close(code: 1002)])
        var early = Machine(role: .app, jitter: JitterSource(seed: 1))
        _ = early.handle(.start)
        _ = early.handle(.transportOpened(cursor: 0))
        #expect(early.handle(.frame(.message(Self.message(1)))) == [.close(code: 1002)])
    }

    @Test func anotherVersionStops() {
        var machine = Machine(role: .app, jitter: JitterSource(seed: 1))
        _ = machine.handle(.start)
        _ = machine.handle(.transportOpened(cursor: 0))
        #expect(machine.handle(.frame(.welcome(version: 3, sessionID: "s", lastSequence: 0, window: 1, badge: 0))) == [
            .close(code: 1002), .stopped(.protocolError),
        ])
    }
}
