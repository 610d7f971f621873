import APNS
import Testing

@Suite struct APNSPoolStateMachineTests {
    typealias Machine = APNSPoolStateMachine

    @Test func firstRequestOpensTheTargetConnectionsAndWaits() {
        var pool = Machine(targetConnections: 2, maximumQueued: 10)
        #expect(pool.request(1) == [.connect(0), .connect(1)])
        #expect(pool.queuedCount == 1)
        // APNs allows one stream until a request with a valid token.
        #expect(pool.settingsReceived(on: 0, maxStreams: 1) == [.execute(1, on: 0)])
        #expect(pool.request(2) == [])
        #expect(pool.settingsReceived(on: 1, maxStreams: 1) == [.execute(2, on: 1)])
    }

    @Test func raisedStreamLimitDrainsTheQueue() {
        var pool = Machine(targetConnections: 1, maximumQueued: 10)
        _ = pool.request(1)
        _ = pool.settingsReceived(on: 0, maxStreams: 1)
        _ = pool.request(2)
        _ = pool.request(3)
        #expect(pool.queuedCount == 2)
        #expect(pool.settingsReceived(on: 0, maxStreams: 1000) == [.execute(2, on: 0), .execute(3, on: 0)])
        #expect(pool.inFlight == 3)
    }

    @Test func loweredStreamLimitIsHonoured() {
        var pool = Machine(targetConnections: 1, maximumQueued: 10)
        _ = pool.request(1)
        _ = pool.settingsReceived(on: 0, maxStreams: 3)
        _ = pool.request(2)
        _ = pool.request(3)
        #expect(pool.settingsReceived(on: 0, maxStreams: 1) == [])
        #expect(pool.request(4) == [])
        #expect(pool.streamsClosed(on: 0) == [])  // Still 2 open, limit 1.
        #expect(pool.streamsClosed(on: 0) == [])
        #expect(pool.streamsClosed(on: 0) == [.execute(4, on: 0)])
    }

    @Test func requestsGoToTheConnectionWithMostFreeStreams() {
        var pool = Machine(targetConnections: 2, maximumQueued: 10)
        _ = pool.request(1)
        _ = pool.settingsReceived(on: 0, maxStreams: 10)
        _ = pool.settingsReceived(on: 1, maxStreams: 10)
        #expect(pool.request(2) == [.execute(2, on: 1)])
        #expect(pool.request(3) == [.execute(3, on: 0)])
        #expect(pool.request(4) == [.execute(4, on: 1)])
    }

    @Test func fullQueuePushesBack() {
        var pool = Machine(targetConnections: 1, maximumQueued: 2)
        _ = pool.request(1)
        _ = pool.request(2)
        #expect(pool.request(3) == [.fail(3, .queueFull)])
        let cancelled = pool.cancelQueued(1)
        let cancelledTwice = pool.cancelQueued(1)
        #expect(cancelled && !cancelledTwice)
        #expect(pool.request(4) == [])
        #expect(pool.settingsReceived(on: 0, maxStreams: 10) == [.execute(2, on: 0), .execute(4, on: 0)])
    }

    @Test func goAwayDrainsAndReplacesTheConnection() {
        var pool = Machine(targetConnections: 1, maximumQueued: 10)
        _ = pool.request(1)
        _ = pool.settingsReceived(on: 0, maxStreams: 10)
        #expect(pool.goingAway(0) == [.connect(1)])
        #expect(pool.request(2) == [])  // Waits for the new connection, not the draining one.
        #expect(pool.streamsClosed(on: 0) == [.close(0)])
        #expect(pool.settingsReceived(on: 1, maxStreams: 10) == [.execute(2, on: 1)])
        #expect(pool.connectionClosed(0) == [])
    }

    @Test func idleGoAwayClosesAtOnce() {
        var pool = Machine(targetConnections: 1, maximumQueued: 10)
        _ = pool.request(1)
        _ = pool.settingsReceived(on: 0, maxStreams: 10)
        _ = pool.streamsClosed(on: 0)
        #expect(pool.goingAway(0) == [.close(0), .connect(1)])
    }

    @Test func failedConnectsBackOffAndThenRecover() {
        var pool = Machine(targetConnections: 1, maximumQueued: 10)
        _ = pool.request(1)
        #expect(pool.connectionClosed(0) == [.scheduleReconnect(attempt: 1)])
        #expect(pool.request(2) == [])  // No connection storm while waiting.
        #expect(pool.reconnectDue() == [.connect(1)])
        #expect(pool.connectionClosed(1) == [.scheduleReconnect(attempt: 2)])
        #expect(pool.reconnectDue() == [.connect(2)])
        #expect(pool.settingsReceived(on: 2, maxStreams: 5) == [.execute(1, on: 2), .execute(2, on: 2)])
        // A working connection that later drops reconnects at once: the failure count was reset.
        #expect(pool.connectionClosed(2) == [.connect(3)])
    }

    @Test func shutDownFailsWaitersAndClosesConnections() {
        var pool = Machine(targetConnections: 1, maximumQueued: 10)
        _ = pool.request(1)
        _ = pool.request(2)
        #expect(pool.shutDown() == [.fail(1, .shutDown), .fail(2, .shutDown), .close(0)])
        #expect(pool.request(3) == [.fail(3, .shutDown)])
    }
}
