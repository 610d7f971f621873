@testable import BeckonServer
import NIOCore
import NIOPosix
import BeckonStore
import Testing

/// `http.max-connections`: connections beyond the limit are closed at once instead of waiting
/// unanswered, and the ones already open keep working.
@Suite struct ConnectionLimitTests {
    @Test func connectionsBeyondTheLimitAreClosedAndTheOthersStillWork() async throws {
        try await SyncTestServer.with(configure: { $0.http.maximumConnections = 2 }) { server in
            let first = try await RawConnection.open(port: server.port)
            let second = try await RawConnection.open(port: server.port)
            #expect(try await first.get("/health").hasPrefix("HTTP/1.1 200"))
            #expect(try await second.get("/health").hasPrefix("HTTP/1.1 200"))

            let third = try await RawConnection.open(port: server.port)
            // Closed by the server without a byte, instead of hanging in the backlog.
            #expect(try await third.closedByPeer(within: .seconds(5)))
            #expect(try await first.get("/health").hasPrefix("HTTP/1.1 200"))

            // A closed connection frees its place.
            try await second.close()
            var admitted = false
            for _ in 0..<50 where !admitted {  // The server sees the close a moment later.
                let next = try await RawConnection.open(port: server.port)
                if let answer = try? await next.get("/health"), answer.hasPrefix("HTTP/1.1 200") {
                    admitted = true
                } else {
                    try await Task.sleep(for: .milliseconds(20))
                }
                try? await next.close()
            }
            #expect(admitted)
            try await first.close()
        }
    }

    /// Slowloris: a client that trickles its request head a byte at a time is closed once
    /// `http.request-head-seconds` have passed since it connected, however steadily it trickles;
    /// a client that sends its head in time is answered, and its keep-alive connection is closed
    /// after `http.idle-seconds` without a request.
    @Test func slowHeadersAndIdleKeepAliveConnectionsAreClosed() async throws {
        try await SyncTestServer.with(configure: {
            $0.http.requestHeadSeconds = 2
            $0.http.idleSeconds = 5
        }) { server in
            // Taken before connecting: the server's deadline cannot start earlier, however late
            // this task resumes after the connect under load.
            let opened = ContinuousClock.now
            let slow = try await RawConnection.open(port: server.port)
            var closed = false
            // Trickles for up to 30 s (a header value that never ends): on a loaded machine the
            // server's timer can fire seconds late, after a short head would have been complete.
            let head = Array("GET /health HTTP/1.1\r\nHost: test\r\nX-Slow: ".utf8) + Array(repeating: UInt8(ascii: "a"), count: 300)
            for byte in head where ContinuousClock.now - opened < .seconds(30) {
                // A byte every 100 ms: a read-idle timer of a second would never fire.
                guard slow.channel.isActive, (try? await slow.channel.writeAndFlush(ByteBuffer(bytes: [byte])).get()) != nil
                else {
                    closed = true
                    break
                }
                try await Task.sleep(for: .milliseconds(100))
            }
            let held = ContinuousClock.now - opened
            #expect(closed, "the trickling client must be cut off")
            #expect(held >= .seconds(2), "closed after \(held) (100 ms a byte)")

            let prompt = try await RawConnection.open(port: server.port)
            #expect(try await prompt.get("/health").hasPrefix("HTTP/1.1 200"))
            // Kept alive past the head deadline (it applies to the first head only)...
            try await Task.sleep(for: .milliseconds(2500))
            #expect(try await prompt.get("/health").hasPrefix("HTTP/1.1 200"))
            // ...and closed once idle for longer than http.idle-seconds.
            #expect(try await prompt.closedByPeer(within: .seconds(15)))
        }
    }

    /// Slow bodies: a body that is not complete `http.body-seconds` after its head is answered
    /// 408 and its connection closed, however steadily it trickles; one the server answered early
    /// (401 before reading it) is closed too rather than drained for ever; nothing is stored.
    @Test func slowBodiesAreCutOffAtTheirDeadline() async throws {
        try await SyncTestServer.with(configure: { $0.http.bodySeconds = 2 }) { server in
            let body = #"{"recipients":{"users":["slow"]},"payload":{"text":"never whole"}}"#
            func trickle(authorization: String?) async throws -> (answer: String, held: Duration) {
                let started = ContinuousClock.now
                let connection = try await RawConnection.open(port: server.port)
                let head = "POST /v1/messages HTTP/1.1\r\nHost: test\r\nContent-Type: application/json\r\n"
                    + (authorization.map { "Authorization: Bearer \($0)\r\n" } ?? "")
                    + "Content-Length: \(body.utf8.count)\r\n\r\n"
                try await connection.channel.writeAndFlush(ByteBuffer(string: head)).get()
                // A byte every 200 ms: 12 s for the whole body, far past the deadline.
                for byte in body.utf8 {
                    guard connection.channel.isActive,
                        (try? await connection.channel.writeAndFlush(ByteBuffer(bytes: [byte])).get()) != nil
                    else { break }
                    try await Task.sleep(for: .milliseconds(200))
                }
                let answer = String(decoding: try await connection.everything(within: .seconds(15)), as: UTF8.self)
                return (answer, ContinuousClock.now - started)
            }

            let keyed = try await trickle(authorization: server.chatKey)
            #expect(keyed.answer.hasPrefix("HTTP/1.1 408"), "\(keyed.answer)")
            #expect(keyed.answer.contains(#""code":"request_timeout""#))
            #expect(keyed.held >= .seconds(2) && keyed.held < .seconds(10), "closed after \(keyed.held)")

            let anonymous = try await trickle(authorization: nil)
            #expect(anonymous.answer.hasPrefix("HTTP/1.1 401"), "\(anonymous.answer)")
            #expect(!anonymous.answer.contains("408"), "answered once")
            #expect(anonymous.held >= .seconds(2) && anonymous.held < .seconds(10), "closed after \(anonymous.held)")

            // A prompt request on a fresh connection is unaffected, and nothing slow was stored.
            let prompt = try await RawConnection.open(port: server.port)
            #expect(try await prompt.get("/health").hasPrefix("HTTP/1.1 200"))
            #expect(try await server.store.messages(for: UserRef(appID: "chat", userID: "slow"), after: 0, limit: 10).isEmpty)
        }
    }

    /// One timer a connection, not one a request: the second request of a keep-alive connection
    /// has its own whole deadline, however close to the first request's its body ends.
    @Test func eachRequestOfAKeepAliveConnectionHasItsOwnDeadline() async throws {
        // Seconds, not fractions: two cores running the whole suite delay a step by hundreds of
        // milliseconds, and the margins below must outlast that.
        try await SyncTestServer.with(configure: { $0.http.bodySeconds = 4 }) { server in
            let connection = try await RawConnection.open(port: server.port)
            let body = #"{"recipients":{"users":["kept"]},"payload":{"text":"on time"}}"#
            let head = "POST /v1/messages HTTP/1.1\r\nHost: test\r\nContent-Type: application/json\r\n"
                + "Authorization: Bearer \(server.chatKey)\r\nContent-Length: \(body.utf8.count)\r\n\r\n"
            #expect(try await connection.answer(to: head + body).hasPrefix("HTTP/1.1 202"))
            // The second head comes 3 s after the first and its body 2 s later: past the first
            // request's deadline, well within its own.
            try await Task.sleep(for: .milliseconds(3000))
            let half = body.utf8.count / 2
            try await connection.channel.writeAndFlush(ByteBuffer(string: head + String(body.prefix(half)))).get()
            try await Task.sleep(for: .milliseconds(2000))
            let second = try await connection.answer(to: String(body.dropFirst(half)))
            #expect(second.hasPrefix("HTTP/1.1 202"), "\(second)")
            let stored = try await server.store.messages(for: UserRef(appID: "chat", userID: "kept"), after: 0, limit: 10)
            #expect(stored.count == 2)
        }
    }

    /// SIGTERM with an upload still trickling (its body deadline far off): the connection is
    /// closed once `shutdown.grace-seconds` have passed, not when the client is done.
    @Test func shutdownDoesNotWaitPastItsGraceForATricklingUpload() async throws {
        try await SyncTestServer.with(configure: {
            $0.http.bodySeconds = 120
            $0.shutdownGraceSeconds = 1
        }) { server in
            let connection = try await RawConnection.open(port: server.port)
            let head = "POST /v1/messages HTTP/1.1\r\nHost: test\r\nContent-Type: application/json\r\n"
                + "Authorization: Bearer \(server.chatKey)\r\nContent-Length: 1000\r\n\r\n{\"recipients\""
            try await connection.channel.writeAndFlush(ByteBuffer(string: head)).get()
            try await Task.sleep(for: .milliseconds(200))  // the request reaches its route
            let started = ContinuousClock.now
            await server.group.triggerGracefulShutdown()
            #expect(try await connection.closedByPeer(within: .seconds(20)))
            let took = ContinuousClock.now - started
            #expect(took >= .seconds(1) && took < .seconds(10), "closed \(took) after shutdown began (grace 1 s)")
        }
    }

    @Test func unsetLimitFollowsTheOpenFilesLimit() {
        let limit = FileDescriptorLimit.connectionLimit(configured: nil)
        #expect(limit >= 16)
        #expect(FileDescriptorLimit.connectionLimit(configured: 7) == 7)
        // Never above the open-files limit less the reserve, whatever is configured.
        #expect(FileDescriptorLimit.connectionLimit(configured: Int.max) == limit)
    }
}

/// A plain TCP client that writes raw HTTP/1.1 and collects what comes back.
final class RawConnection: Sendable {
    let channel: any Channel
    private let received: AsyncStream<ByteBuffer>
    private let continuation: AsyncStream<ByteBuffer>.Continuation

    private init(channel: any Channel, received: AsyncStream<ByteBuffer>, continuation: AsyncStream<ByteBuffer>.Continuation) {
        self.channel = channel
        self.received = received
        self.continuation = continuation
    }

    static func open(port: Int) async throws -> RawConnection {
        let (stream, continuation) = AsyncStream.makeStream(of: ByteBuffer.self)
        let channel = try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandler(Collector(continuation))
                }
            }
            .connect(host: "127.0.0.1", port: port).get()
        return RawConnection(channel: channel, received: stream, continuation: continuation)
    }

    /// Sends a GET and returns the first bytes of the answer.
    func get(_ path: String) async throws -> String {
        try await answer(to: "GET \(path) HTTP/1.1\r\nHost: test\r\n\r\n")
    }

    /// Sends raw bytes and returns the first bytes of the answer.
    func answer(to raw: String) async throws -> String {
        try await channel.writeAndFlush(ByteBuffer(string: raw)).get()
        var iterator = received.makeAsyncIterator()
        guard let buffer = await iterator.next() else { throw FixtureError.unexpected("closed before answering") }
        return String(buffer: buffer)
    }

    /// Whether the peer closed the connection, sending nothing, within `timeout`.
    func closedByPeer(within timeout: Duration) async throws -> Bool {
        try await withThrowingTaskGroup(of: Bool.self) { group in
            group.addTask {
                var iterator = self.received.makeAsyncIterator()
                return await iterator.next() == nil
            }
            group.addTask {
                try await Task.sleep(for: timeout)
                return false
            }
            let first = try await group.next()!
            group.cancelAll()
            return first
        }
    }

    /// Every byte until the peer hangs up (or `timeout` passes).
    func everything(within timeout: Duration) async throws -> [UInt8] {
        try await withThrowingTaskGroup(of: [UInt8]?.self) { group in
            group.addTask {
                var bytes: [UInt8] = []
                for await buffer in self.received { bytes += buffer.readableBytesView }
                return bytes
            }
            group.addTask {
                try await Task.sleep(for: timeout)
                return nil
            }
            let first = try await group.next()!
            group.cancelAll()
            guard let first else { throw FixtureError.unexpected("the server did not hang up within \(timeout)") }
            return first
        }
    }

    func close() async throws {
        try await channel.close()
    }

    private final class Collector: ChannelInboundHandler, Sendable {
        typealias InboundIn = ByteBuffer
        let continuation: AsyncStream<ByteBuffer>.Continuation
        init(_ continuation: AsyncStream<ByteBuffer>.Continuation) { self.continuation = continuation }

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            continuation.yield(unwrapInboundIn(data))
        }

        func channelInactive(context: ChannelHandlerContext) {
            continuation.finish()
            context.fireChannelInactive()
        }
    }
}
