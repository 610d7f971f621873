import BeckonJSON
import BeckonProtocol
@testable import BeckonServer
import BeckonStore
import Foundation
import Testing

/// The protocol rules of docs/sync-protocol.md on the state machine alone: no sockets, no store.
@Suite struct SyncSessionStateMachineTests {
    typealias Machine = SyncSessionStateMachine

    static func machine(maxWindow: Int = 100) -> Machine {
        Machine(sessionID: "s1", limits: .init(defaultWindow: min(100, maxWindow), maximumWindow: maxWindow))
    }

    static func entry(_ seq: Int64) -> MailboxEntry {
        MailboxEntry(
            userID: "alice", sequence: seq,
            message: Message(
                id: "m\(seq)", appID: "chat", kind: .message, payload: Data(#"{"n":\#(seq)}"#.utf8), hints: nil,
                urgency: .normal, expiresAt: nil, idempotencyKey: nil, createdAt: Date(timeIntervalSince1970: 1)))
    }

    static func isViolation(_ actions: [Machine.Action], _ code: String) -> Bool {
        guard actions.count == 2, case .send(.error(let sent, _)) = actions[0],
            case .close(.protocolError, _, .protocolError) = actions[1]
        else { return false }
        return sent.rawValue == code
    }

    /// Hello with `cursor`, the store's last sequence `last`: returns the machine streaming.
    static func streaming(cursor: Int64 = 0, last: Int64, window: Int64? = nil, maxWindow: Int = 100)
        -> (Machine, [Machine.Action])
    {
        var machine = machine(maxWindow: maxWindow)
        #expect(machine.receive(.hello(version: 2, role: .app, cursor: cursor, window: window)) == [.register(.app)])
        #expect(machine.registered(.accepted) == [.loadStart(cursor: cursor)])
        let actions = machine.started(lastSequence: last, badge: 0)
        return (machine, actions)
    }

    @Test func helloGetsWelcomeThenAFetchFromTheCursor() {
        let (_, actions) = Self.streaming(cursor: 3, last: 10, window: 5)
        #expect(actions == [
            .send(.welcome(version: 2, sessionID: "s1", lastSequence: 10, window: 5, badge: 0, features: SyncProtocol.features)),
            .storeAck(upTo: 3),
            .fetch(after: 3, limit: 5),
        ])
    }

    @Test func messagesReadWhileAwayAreToldAfterWelcome() {
        var machine = Self.machine()
        _ = machine.receive(.hello(version: 2, role: .app, cursor: 4, window: nil))
        _ = machine.registered(.accepted)
        let actions = machine.started(lastSequence: 4, badge: 1, readUpToCursor: ["m4", "m2"])
        #expect(actions == [
            .send(.welcome(version: 2, sessionID: "s1", lastSequence: 4, window: 100, badge: 1, features: SyncProtocol.features)),
            .send(.readElsewhere(ids: ["m4", "m2"], badge: 1)),
            .storeAck(upTo: 4),
        ])
    }

    @Test func anEmptyMailboxIsNotRead() {
        let (_, actions) = Self.streaming(cursor: 0, last: 0)
        #expect(actions == [.send(.welcome(version: 2, sessionID: "s1", lastSequence: 0, window: 100, badge: 0, features: SyncProtocol.features))])
    }

    @Test func theWindowIsCappedAndDefaulted() {
        let (_, capped) = Self.streaming(last: 0, window: 1000, maxWindow: 20)
        #expect(capped == [.send(.welcome(version: 2, sessionID: "s1", lastSequence: 0, window: 20, badge: 0, features: SyncProtocol.features))])
        let (_, defaulted) = Self.streaming(last: 0, window: nil, maxWindow: 250)
        #expect(defaulted == [.send(.welcome(version: 2, sessionID: "s1", lastSequence: 0, window: 100, badge: 0, features: SyncProtocol.features))])
    }

    @Test func atMostWindowMessagesAreInFlight() {
        var (machine, actions) = Self.streaming(last: 5, window: 2)
        #expect(actions.last == .fetch(after: 0, limit: 2))
        // A store that returned more than asked still yields only `window` frames.
        actions = machine.fetched([Self.entry(1), Self.entry(2), Self.entry(3)])
        #expect(actions == [.send(.message(SyncMessage(Self.entry(1)))), .send(.message(SyncMessage(Self.entry(2))))])
        // Wake-ups while the window is full read nothing.
        #expect(machine.newMessages() == [])
        // An ack opens the window by what it acknowledges.
        #expect(machine.receive(.ack(upTo: 1)) == [.storeAck(upTo: 1), .fetch(after: 2, limit: 1)])
        #expect(machine.fetched([Self.entry(3)]) == [.send(.message(SyncMessage(Self.entry(3))))])
    }

    @Test func aShortReadStopsFetchingUntilAWakeUp() {
        var (machine, _) = Self.streaming(last: 1, window: 10)
        #expect(machine.fetched([Self.entry(1)]) == [.send(.message(SyncMessage(Self.entry(1))))])
        #expect(machine.newMessages() == [.fetch(after: 1, limit: 9)])
        // A wake-up during the read means another read after it, even if it came back short.
        #expect(machine.newMessages() == [])
        #expect(machine.fetched([]) == [.fetch(after: 1, limit: 9)])
        #expect(machine.fetched([]) == [])
    }

    @Test func anOfferedEntryThatFollowsWhatWasSentGoesOutWithoutARead() {
        var (machine, _) = Self.streaming(last: 1, window: 3)
        #expect(machine.fetched([Self.entry(1)]) == [.send(.message(SyncMessage(Self.entry(1))))])
        // The store had nothing after 1: entries 2 and 3 (offered out of order) follow on.
        #expect(machine.newMessages(offered: [Self.entry(3), Self.entry(2)]) == [
            .send(.message(SyncMessage(Self.entry(2)))), .send(.message(SyncMessage(Self.entry(3)))),
        ])
        // Already sent: nothing again.
        #expect(machine.newMessages(offered: [Self.entry(3)]) == [])
        // The window (3) is full: entry 4 waits in the store for an ack.
        #expect(machine.newMessages(offered: [Self.entry(4)]) == [])
        #expect(machine.receive(.ack(upTo: 3)) == [.storeAck(upTo: 3), .fetch(after: 3, limit: 3)])
    }

    @Test func aGapInTheOfferedEntriesFallsBackToAReadOfTheStore() {
        var (machine, _) = Self.streaming(last: 1, window: 10)
        _ = machine.fetched([Self.entry(1)])
        // Entry 2 was announced later (another post's answer overtook it) or on another node.
        #expect(machine.newMessages(offered: [Self.entry(3)]) == [.fetch(after: 1, limit: 9)])
        // While that read is out, an offered entry is not sent past it: the read is done again.
        #expect(machine.newMessages(offered: [Self.entry(4)]) == [])
        #expect(machine.fetched([Self.entry(2), Self.entry(3)]) == [
            .send(.message(SyncMessage(Self.entry(2)))), .send(.message(SyncMessage(Self.entry(3)))),
            .fetch(after: 3, limit: 7),
        ])
        #expect(machine.fetched([Self.entry(4)]) == [.send(.message(SyncMessage(Self.entry(4))))])
        // Once the reads come back short, the next entry is sent as offered again.
        #expect(machine.newMessages(offered: [Self.entry(5)]) == [.send(.message(SyncMessage(Self.entry(5))))])
    }

    @Test func acksAreCumulativeAndNeverBackwards() {
        var (machine, _) = Self.streaming(last: 3, window: 10)
        _ = machine.fetched([Self.entry(1), Self.entry(2), Self.entry(3)])
        #expect(machine.receive(.ack(upTo: 2)) == [.storeAck(upTo: 2)])
        #expect(machine.receive(.ack(upTo: 1)) == [])
        #expect(machine.receive(.ack(upTo: 2)) == [])
        #expect(Self.isViolation(machine.receive(.ack(upTo: 4)), "ack_beyond_sent"))
    }

    @Test func framesBeforeHelloAreProtocolErrors() {
        var machine = Self.machine()
        #expect(Self.isViolation(machine.receive(.ack(upTo: 0)), "unexpected_frame"))
        #expect(machine.receive(.ping(id: nil)) == [], "nothing after the close")
        var other = Self.machine()
        #expect(Self.isViolation(other.receive(.ping(id: nil)), "unexpected_frame"))
    }

    @Test func helloRules() {
        var twice = Self.streaming(last: 0).0
        #expect(Self.isViolation(twice.receive(.hello(version: 2, role: .app, cursor: 0, window: nil)), "unexpected_frame"))
        var version = Self.machine()
        #expect(Self.isViolation(version.receive(.hello(version: 1, role: .app, cursor: 0, window: nil)), "unsupported_version"))
        var negative = Self.machine()
        #expect(Self.isViolation(negative.receive(.hello(version: 2, role: .app, cursor: -1, window: nil)), "invalid_field"))
        var zeroWindow = Self.machine()
        #expect(Self.isViolation(zeroWindow.receive(.hello(version: 2, role: .app, cursor: 0, window: 0)), "invalid_field"))
        var ahead = Self.machine()
        _ = ahead.receive(.hello(version: 2, role: .app, cursor: 9, window: nil))
        _ = ahead.registered(.accepted)
        #expect(Self.isViolation(ahead.started(lastSequence: 5, badge: 0), "cursor_ahead"))
    }

    @Test func aRefusedRegistrationClosesWithTheHubsCode() {
        var machine = Self.machine()
        #expect(machine.receive(.hello(version: 2, role: .extension, cursor: 0, window: nil)) == [.register(.extension)])
        let refusal = SyncRegistration.refused(.preempted, reason: "preempted: the app holds the device's session", end: .preempted)
        #expect(machine.registered(refusal) == [.close(.preempted, reason: "preempted: the app holds the device's session", end: .preempted)])
        #expect(machine.connectionEnded() == .preempted)
        #expect(machine.receive(.ack(upTo: 1)) == [], "nothing after the close")
    }

    @Test func unknownTypesAndBadJSONAreProtocolErrors() {
        #expect(SyncClientFrame.parse(#"{"type":"subscribe"}"#) == .failure(SyncFrameError(
            .unknownType, #"type: "subscribe" is not a frame of version 2"#)))
        guard case .failure(let malformed) = SyncClientFrame.parse("not json") else { Issue.record(); return }
        #expect(malformed.code == .malformedFrame)
        guard case .failure(let mistyped) = SyncClientFrame.parse(#"{"type":"ack","upTo":"3"}"#) else { Issue.record(); return }
        #expect(mistyped.code == .invalidField)
        // Unknown fields are ignored.
        #expect(SyncClientFrame.parse(#"{"type":"ack","upTo":3,"extra":true}"#) == .success(.ack(upTo: 3)))
        var machine = Self.streaming(last: 0).0
        #expect(Self.isViolation(machine.receiveInvalid(malformed), "malformed_frame"))
    }

    @Test func receiptsAreStoredAndAnEmptyFrameIsNothing() {
        var (machine, _) = Self.streaming(last: 0)
        let receipt = SyncReceipt(messageID: "m1", kind: .shown, at: Date(timeIntervalSince1970: 5))
        #expect(machine.receive(.receipts([receipt])) == [.storeReceipts([receipt])])
        #expect(machine.receive(.receipts([])) == [])
    }

    @Test func pingReadAndReadElsewhere() {
        var (machine, _) = Self.streaming(last: 0)
        #expect(machine.receive(.ping(id: .string("p"))) == [.send(.pong(id: .string("p")))])
        #expect(machine.receive(.read(ids: ["a", "b"])) == [.markRead(ids: ["a", "b"])])
        #expect(machine.receive(.read(ids: [])) == [])
        #expect(machine.readElsewhere(ids: ["a"], badge: 2) == [.send(.readElsewhere(ids: ["a"], badge: 2))])
        var waiting = Self.machine()
        #expect(waiting.readElsewhere(ids: ["a"], badge: 2) == [], "not before hello")
    }

    @Test func byeIsACleanCloseAndADropIsNot() {
        var (clean, _) = Self.streaming(last: 0)
        #expect(clean.receive(.bye) == [.close(.normal, reason: "bye", end: .clean)])
        #expect(clean.connectionEnded() == .clean)
        var (dropped, _) = Self.streaming(last: 0)
        #expect(dropped.connectionEnded() == .dropped)
        #expect(dropped.receive(.ping(id: nil)) == [])
    }

    @Test func serverClosesOnce() {
        var (machine, _) = Self.streaming(last: 0)
        #expect(machine.close(.replaced, reason: "r", end: .replaced) == [.close(.replaced, reason: "r", end: .replaced)])
        #expect(machine.close(.goingAway, reason: "g", end: .shutdown) == [])
        #expect(machine.newMessages() == [])
        #expect(machine.connectionEnded() == .replaced)
    }

    @Test func messageFramesCarryThePayloadAsJSON() throws {
        let text = SyncServerFrame.message(SyncMessage(Self.entry(7))).text
        let json = try JSONParser.parse(Array(text.utf8))
        #expect(json["type"]?.string == "message")
        #expect(json["seq"]?.number == 7)
        #expect(json["id"]?.string == "m7")
        #expect(json["kind"]?.string == "message")
        #expect(json["payload"]?["n"]?.number == 7)
        #expect(json["createdAt"]?.number == 1000)
        #expect(json["expiresAt"] == nil)
        #expect(json["read"] == JSONValue.bool(false))
    }
}
