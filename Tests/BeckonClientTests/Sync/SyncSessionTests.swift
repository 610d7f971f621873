@testable import BeckonClient
import BeckonClientTestSupport
import BeckonProtocol
import Foundation
import Testing

/// The session actor over a scripted socket: what reaches the wire, the store and the ports.
@Suite struct SyncSessionTests {
    @Test func helloResumesFromTheCursorStoredOnTheDevice() async throws {
        let harness = try await SessionHarness.make(role: .extension, window: 20)
        _ = try harness.store.storeSynced(ClientStoreTests.message(7), as: harness.writer)
        await harness.session.start()
        let connection = try await harness.transport.connection(0)
        try await connection.waitForSent("hello") {
            $0 == .hello(version: 2, role: .extension, cursor: 7, window: 20)
        }
        #expect(connection.endpoint.subprotocol == "beckon.v2")
        await harness.finish()
    }

    @Test func eachMessageIsStoredThenAcknowledgedAndNotified() async throws {
        let harness = try await SessionHarness.make()
        let connection = try await harness.connect(lastSequence: 2, badge: 2)
        connection.message(1)
        connection.message(2)
        try await connection.waitForSent("ack 2") { $0 == .ack(upTo: 2) }
        // By the time an ack is on the wire, its message is committed.
        #expect(try harness.store.cursor() == 2)
        #expect(try harness.store.message(id: ScriptedConnection.id(2)) != nil)
        #expect(await harness.session.untilCaughtUp())
        try await eventually("two notifications") { await harness.center.added.count == 2 }
        #expect(await harness.center.added == [ScriptedConnection.id(1), ScriptedConnection.id(2)])
        #expect(await harness.center.badge == 2)
        await harness.finish()
    }

    @Test func aMessageTheStoreRefusesIsNeverAcknowledged() async throws {
        let harness = try await SessionHarness.make()
        let connection = try await harness.connect(lastSequence: 1)
        await harness.writer.release()  // the lease is gone: every write is refused
        connection.message(1)
        #expect(await harness.session.untilStopped() == .leaseLost)
        #expect(connection.lastAck == nil)
        #expect(try harness.store.message(id: ScriptedConnection.id(1)) == nil)
        harness.test.remove()
    }

    @Test func aDropReconnectsAfterABackoffAndResumesFromTheCursor() async throws {
        let harness = try await SessionHarness.make()
        let first = try await harness.connect(lastSequence: 3)
        first.message(1)
        try await first.waitForSent("ack 1") { $0 == .ack(upTo: 1) }
        first.serverClose(nil)
        try await eventually("the reconnect timer") {
            if case .waitingToReconnect = await harness.session.state { true } else { false }
        }
        #expect(harness.transport.attemptCount == 1, "not before the backoff")
        try await harness.clock.advance(by: .milliseconds(100), until: "the second connect") {
            harness.transport.connections.count == 2
        }
        let second = try await harness.transport.connection(1)
        try await second.waitForSent("hello from 1") { $0 == .hello(version: 2, role: .app, cursor: 1, window: nil) }
        await harness.finish()
    }

    @Test func aResentMessageIsStoredAndShownOnce() async throws {
        let harness = try await SessionHarness.make()
        let first = try await harness.connect(lastSequence: 1)
        first.message(1)
        try await first.waitForSent("ack 1") { $0 == .ack(upTo: 1) }
        first.serverClose(1001)
        try await harness.clock.advance(by: .milliseconds(100), until: "the second connect") {
            harness.transport.connections.count == 2
        }
        // The server did not record the ack (it went down): it sends message 1 again.
        let second = try await harness.connect(1, lastSequence: 1)
        second.message(1)
        try await second.waitForSent("ack 1 again") { $0 == .ack(upTo: 1) }
        #expect(try harness.store.messages().count == 1)
        #expect(await harness.center.added.count == 1)
        await harness.finish()
    }

    @Test(arguments: [UInt16(4002), 4003, 4008])
    func noReconnectAfterPreemptionRevocationOrAProtocolError(code: UInt16) async throws {
        let harness = try await SessionHarness.make()
        let connection = try await harness.connect(lastSequence: 0)
        connection.serverClose(code)
        let reason = await harness.session.untilStopped()
        #expect(reason == [4002: .preempted, 4003: .revoked, 4008: .protocolError][code])
        harness.clock.advance(by: .seconds(120))
        #expect(harness.transport.attemptCount == 1)
        await harness.finish()
    }

    @Test func aFailedConnectIsRetriedWithGrowingDelays() async throws {
        let harness = try await SessionHarness.make()
        harness.transport.failNext(2)
        await harness.session.start()
        try await eventually("the first attempt failed") {
            if case .waitingToReconnect(1) = await harness.session.state { true } else { false }
        }
        let start = harness.clock.now()
        try await harness.clock.advance(by: .milliseconds(50), until: "a connection") {
            !harness.transport.connections.isEmpty
        }
        #expect(harness.transport.attemptCount == 3)
        // Two waits: at least 250 ms then at least 500 ms (half of each cap is fixed).
        #expect(harness.clock.now().timeIntervalSince(start) >= 0.75)
        await harness.finish()
    }

    @Test func readMarkersGoOutNowOrAfterTheNextWelcome() async throws {
        let harness = try await SessionHarness.make()
        // Read while offline: pending in the store.
        try harness.store.markRead(["early"], locally: true, as: harness.writer)
        let connection = try await harness.connect(lastSequence: 0)
        try await connection.waitForSent("pending read") { $0 == .read(ids: ["early"]) }
        // Read while connected.
        try harness.store.markRead(["late"], locally: true, as: harness.writer)
        harness.session.sendReadMarkers(["late"])
        try await connection.waitForSent("read") { $0 == .read(ids: ["late"]) }
        try await eventually("pending cleared") { try harness.store.pendingReads().isEmpty }
        await harness.finish()
    }

    @Test func readElsewhereRemovesExactlyThoseNotificationsAndSetsTheBadge() async throws {
        let harness = try await SessionHarness.make()
        let connection = try await harness.connect(lastSequence: 3, badge: 3)
        for sequence in Int64(1)...3 { connection.message(sequence) }
        try await eventually("three shown") { await harness.center.delivered.count == 3 }
        connection.server(.readElsewhere(ids: [ScriptedConnection.id(2)], badge: 2))
        // The removal, the ledger and the badge follow one another: wait for the last of them
        // (on a loaded machine, waiting for the removal alone is not enough).
        try await eventually("one removed, its ledger entry and the badge updated") {
            let removed = await harness.center.delivered.count == 2
            let badge = await harness.center.badge == 2
            let ledger = (try? harness.store.ledgerEntry(messageID: ScriptedConnection.id(2)))?.state == .removed
            return removed && badge && ledger
        }
        #expect(await harness.center.removed == [ScriptedConnection.id(2)])
        #expect(await harness.center.badge == 2)
        #expect(try harness.store.message(id: ScriptedConnection.id(2))?.isRead == true)
        #expect(try harness.store.ledgerEntry(messageID: ScriptedConnection.id(2))?.state == .removed)
        await harness.finish()
    }

    @Test func aMessageAlreadyReadIsNeverShownAndIsClearedIfShowing() async throws {
        let harness = try await SessionHarness.make()
        // An alert for it is on screen (iOS showed the push).
        await harness.center.show(ScriptedConnection.id(1))
        let connection = try await harness.connect(lastSequence: 2)
        connection.message(1, read: true)
        connection.message(2, read: true)
        try await connection.waitForSent("ack 2") { $0 == .ack(upTo: 2) }
        try await eventually("cleared") { await harness.center.delivered.isEmpty }
        #expect(await harness.center.added.isEmpty)
        await harness.finish()
    }

    @Test func callEndedEndsTheRingingCall() async throws {
        let harness = try await SessionHarness.make()
        let callID = "5f0c7c1e-3b7a-4c55-9a64-3f4cfd4f8b10"
        harness.calls.receiveVoIPPush(["beckon": ["reason": "call-voip", "call": .string(callID), "ids": [.string(callID)]]]) {
            .incoming($0)
        }
        let connection = try await harness.connect(lastSequence: 0)
        connection.server(.callEnded(callID: callID, outcome: .answeredElsewhere))
        try await eventually("ended") { !harness.reporter.ends.isEmpty }
        #expect(harness.reporter.ends.first?.call.uuid == UUID(uuidString: callID))
        #expect(harness.reporter.ends.first?.outcome == .answeredElsewhere)
        #expect(try harness.store.callOutcome(callID) == .answeredElsewhere)
        await harness.finish()
    }

    @Test func stopSaysByeAndWaitsForTheServersClose() async throws {
        let harness = try await SessionHarness.make()
        let connection = try await harness.connect(lastSequence: 0)
        #expect(await harness.session.untilCaughtUp())
        harness.session.stop()
        try await connection.waitForSent("bye") { $0 == .bye }
        connection.serverClose(1000)
        #expect(await harness.session.untilStopped() == .requested)
        await harness.writer.release()
        harness.test.remove()
    }

    @Test func aServerThatNeverClosesAfterByeIsClosedByTheClient() async throws {
        let harness = try await SessionHarness.make()
        let connection = try await harness.connect(lastSequence: 0)
        harness.session.stop()
        try await connection.waitForSent("bye") { $0 == .bye }
        try await harness.clock.advance(by: .seconds(1), until: "the client closes") { connection.closedByClient != nil }
        #expect(await harness.session.untilStopped() == .requested)
        #expect(connection.closedByClient == 1000)
        await harness.writer.release()
        harness.test.remove()
    }

    @Test func anUnreadableFrameClosesAndRetries() async throws {
        let harness = try await SessionHarness.make()
        let connection = try await harness.connect(lastSequence: 0)
        connection.serverText(#"{"type":"surprise"}"#)
        try await eventually("closed with 1002") { connection.closedByClient == 1002 }
        try await eventually("retrying") { if case .waitingToReconnect = await harness.session.state { true } else { false } }
        await harness.finish()
    }
}
