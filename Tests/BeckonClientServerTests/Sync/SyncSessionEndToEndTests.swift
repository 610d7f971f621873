import BeckonClient
import BeckonClientNIO
import BeckonClientTestSupport
import BeckonProtocol
import Foundation
import Testing

/// The sync session against a real node over loopback (docs/sync-protocol.md).
@Suite(.serialized) struct SyncSessionEndToEndTests {
    @Test func resumesFromTheStoredCursor() async throws {
        try await ClientTestServer.with { server in
            let device = try await ClientTestDevice(server: server, user: "u1", device: "d1")
            defer { device.remove() }
            for index in 1...3 { try await server.post(to: ["u1"], text: "first \(index)") }
            #expect(try await device.syncOnce() == 3)
            #expect(try device.store.cursor() == 3)

            for index in 4...5 { try await server.post(to: ["u1"], text: "later \(index)") }
            let writer = try await device.lock.acquire(timeout: .seconds(10))
            let session = device.session(writer: writer)
            let events = await session.events()
            await session.start()
            #expect(await session.untilCaughtUp())
            await session.stopAndWait()
            await writer.release()
            var stored: [Int64] = []
            for await event in events { if case .stored(let message, _) = event { stored.append(message.sequence) } }
            #expect(stored == [4, 5], "only what came after the cursor")
            #expect(await device.center.added.count == 5)
        }
    }

    @Test func theServerRecordsAnAckOnlyForWhatTheDeviceStored() async throws {
        try await ClientTestServer.with { server in
            let device = try await ClientTestDevice(server: server, user: "u1", device: "d1")
            defer { device.remove() }
            try await server.post(to: ["u1"])
            try await server.post(to: ["u1"])
            // A device whose store refuses the write (its lease is gone) acknowledges nothing.
            let lost = try await device.lock.acquire(timeout: .seconds(10))
            let refused = device.session(writer: lost)
            await lost.release()
            await refused.start()
            #expect(await refused.untilStopped() == .leaseLost)
            #expect((await server.lastAck("d1") ?? 0) == 0)
            #expect(try device.store.messages().isEmpty)

            // The next session gets them again, stores them, and only then acknowledges.
            #expect(try await device.syncOnce() == 2)
            #expect(await server.lastAck("d1") == 2)
        }
    }

    @Test func aMessageTheExtensionFetchedIsStoredAndShownOnceWhenSyncDeliversIt() async throws {
        try await ClientTestServer.with { server in
            let app = try await ClientTestDevice(server: server, user: "u1", device: "d1")
            defer { app.remove() }
            let id = try await server.post(to: ["u1"], text: "hello", notification: ["title": "Anna", "body": "hello"])
            // The push woke the notification service extension (same device, same store file).
            let nse = try await ClientTestDevice(server: server, user: "u1", device: "d1", role: .extension, sharing: app)
            let handler = NotificationServiceHandler(
                fetcher: nse.fetcher, clock: SystemClock(), store: nse.store, lock: nse.lock)
            let push = IncomingNotification(
                identifier: id, payload: ["aps": ["alert": ["loc-key": "BECKON_NEW_MESSAGE"]], "beckon": ["reason": "alert", "ids": .array([.string(id)])]])
            let outcome = await handler.handle(push)
            #expect(outcome.content?.title == "Anna")
            #expect(try app.store.message(id: id)?.synced == false)

            // The app syncs after a reconnect: the message arrives again, is stored once, and is
            // not notified a second time (the extension's alert is showing).
            #expect(try await app.syncOnce() == 0, "not new")
            #expect(try app.store.messages().count == 1)
            #expect(try app.store.message(id: id)?.synced == true)
            #expect(await app.center.added.isEmpty)
        }
    }

    @Test func aDroppedConnectionIsResumedFromTheCursor() async throws {
        try await ClientTestServer.with { server in
            let device = try await ClientTestDevice(server: server, user: "u1", device: "d1")
            defer { device.remove() }
            let transport = DroppingTransport()
            let writer = try await device.lock.acquire(timeout: .seconds(10))
            let session = device.session(writer: writer, transport: transport)
            await session.start()
            #expect(await session.untilCaughtUp())
            try await server.post(to: ["u1"], text: "one")
            try await eventually("stored one") { try device.store.cursor() == 1 }
            // The network drops (no close frame); meanwhile another message is posted.
            await transport.dropCurrent()
            try await server.post(to: ["u1"], text: "two")
            try await eventually("reconnected and stored two") { try device.store.cursor() == 2 }
            #expect(transport.helloCursors == [0, 1])
            #expect(try device.store.messages().map(\.sequence) == [1, 2])
            await session.stopAndWait()
            await writer.release()
        }
    }
}

/// The NIO transport, with a switch that cuts the current socket without a close frame, and a
/// record of each hello's cursor.
final class DroppingTransport: SyncTransport, @unchecked Sendable {
    private let inner = NIOSyncTransport()
    private let lock = NSLockBox()
    private var current: DroppableConnection?
    private var _helloCursors: [Int64] = []

    var helloCursors: [Int64] { lock.run { _helloCursors } }

    func connect(to endpoint: SyncEndpoint) async throws -> any SyncTransportConnection {
        let connection = DroppableConnection(inner: try await inner.connect(to: endpoint)) { [weak self] text in
            if case .hello(_, _, let cursor, _)? = try? SyncClientFrame.parse(text).get() {
                self?.lock.run { self?._helloCursors.append(cursor) }
            }
        }
        lock.run { current = connection }
        return connection
    }

    func dropCurrent() async {
        await lock.run { current }?.drop()
    }
}

final class DroppableConnection: SyncTransportConnection, @unchecked Sendable {
    let inner: any SyncTransportConnection
    let events: AsyncStream<SyncTransportEvent>
    private let continuation: AsyncStream<SyncTransportEvent>.Continuation
    private let onSend: @Sendable (String) -> Void
    private let lock = NSLockBox()
    private var dropped = false

    init(inner: any SyncTransportConnection, onSend: @escaping @Sendable (String) -> Void) {
        self.inner = inner
        self.onSend = onSend
        (events, continuation) = AsyncStream.makeStream(of: SyncTransportEvent.self)
        let continuation = self.continuation
        Task { [weak self] in
            for await event in inner.events {
                guard self?.lock.run({ self?.dropped }) != true else { break }
                continuation.yield(event)
            }
            continuation.finish()
        }
    }

    func send(_ text: String) async throws {
        guard !lock.run({ dropped }) else { throw FakeFailure() }
        onSend(text)
        try await inner.send(text)
    }

    func close(code: UInt16) async { await inner.close(code: code) }

    /// The device sees the socket end with no close code; the server sees it go.
    func drop() async {
        lock.run { dropped = true }
        continuation.yield(.closed(code: nil))
        continuation.finish()
        await inner.close(code: 1001)
    }
}
