import NIOConcurrencyHelpers
import NIOCore
import NIOHTTP1
import NIOPosix
import NIOWebSocket

/// Sync sessions of `beckon bench server` over real WebSockets (SwiftNIO's codec): hello with
/// cursor 0, then every text frame after `welcome` goes to the handler, and what it answers (an
/// ack) is sent back. A session stays open until the process ends.
///
/// Frames are handled on the connection's event loop, not in a Swift task, for the reason
/// `BenchPoster` gives: at 5,000 messages/s the client with both in Swift tasks used 110 µs of CPU
/// a message, with both on their loops 66 µs (docs/benchmarks-history.md, "A lighter load
/// generator").
enum BenchSessions {
    /// Called on the session's event loop with each text message; returns a text message to send back.
    typealias MessageHandler = @Sendable (String) -> String?

    struct Opened: Sendable {
        let count: Int
        let firstError: String?
        let live: NIOLockedValueBox<Int>
        func alive() -> Int { live.withLockedValue { $0 } }
    }

    /// Session k goes to `endpoints[k % endpoints.count]`; at most `concurrency` are being opened at once.
    static func open(
        credentials: [String], endpoints: [BenchEndpoint], group: any EventLoopGroup, concurrency: Int,
        onMessage: @escaping MessageHandler
    ) async throws -> Opened {
        let live = NIOLockedValueBox(0)
        var opened = 0
        var firstError: String?
        await withTaskGroup(of: String?.self) { tasks in
            var next = 0
            func launch() {
                let credential = credentials[next]
                let endpoint = endpoints[next % endpoints.count]
                next += 1
                tasks.addTask {
                    do {
                        try await openOne(endpoint, credential: credential, on: group.next(), live: live, onMessage: onMessage)
                        return nil
                    } catch {
                        return "\(error)"
                    }
                }
            }
            while next < min(concurrency, credentials.count) { launch() }
            for await failure in tasks {
                if let failure { firstError = firstError ?? failure } else { opened += 1 }
                if next < credentials.count { launch() }
            }
        }
        return Opened(count: opened, firstError: firstError, live: live)
    }

    /// Returns once `welcome` has arrived; the session goes on, on its event loop.
    private static func openOne(
        _ endpoint: BenchEndpoint, credential: String, on loop: any EventLoop, live: NIOLockedValueBox<Int>,
        onMessage: @escaping MessageHandler
    ) async throws {
        let welcomed = loop.makePromise(of: Void.self)
        var headers = HTTPHeaders()
        headers.add(name: "Host", value: "\(endpoint.host):\(endpoint.port)")
        headers.add(name: "Authorization", value: "Bearer \(credential)")
        headers.add(name: "Sec-WebSocket-Protocol", value: "beckon.v2")
        let request = HTTPRequestHead(version: .http1_1, method: .GET, uri: "/v1/sync", headers: headers)
        do {
            try await connect(endpoint, request: request, on: loop, welcomed: welcomed, live: live, onMessage: onMessage)
            try await welcomed.futureResult.get()
        } catch {
            welcomed.fail(error)  // A promise left unfulfilled is a crash in debug builds; a second answer is ignored.
            throw error
        }
    }

    private static func connect(
        _ endpoint: BenchEndpoint, request: HTTPRequestHead, on loop: any EventLoop, welcomed: EventLoopPromise<Void>,
        live: NIOLockedValueBox<Int>, onMessage: @escaping MessageHandler
    ) async throws {
        let upgraded: (any Channel)? = try await ClientBootstrap(group: loop)
            .channelOption(.tcpOption(.tcp_nodelay), value: 1)
            .connect(host: endpoint.host, port: endpoint.port) { channel in
                let upgrader = NIOTypedWebSocketClientUpgrader<(any Channel)?>(maxFrameSize: 1 << 20) { channel, _ in
                    channel.eventLoop.makeCompletedFuture {
                        try channel.pipeline.syncOperations.addHandler(
                            SessionHandler(welcomed: welcomed, live: live, onMessage: onMessage))
                        return channel
                    }
                }
                let configuration = NIOTypedHTTPClientUpgradeConfiguration(
                    upgradeRequestHead: request, upgraders: [upgrader],
                    notUpgradingCompletionHandler: { channel in
                        // Refused: nothing more will come on this connection.
                        channel.close(promise: nil)
                        return channel.eventLoop.makeSucceededFuture(nil)
                    })
                return channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.configureUpgradableHTTPClientPipeline(
                        configuration: .init(upgradeConfiguration: configuration))
                }
            }
            .get()
        guard let channel = upgraded else { throw BenchFailure("the server refused the WebSocket upgrade") }
        // Only now: the upgrade handler refuses writes until the upgrade has completed.
        let hello = ByteBuffer(string: #"{"type":"hello","version":2,"cursor":0}"#)
        try await channel.writeAndFlush(WebSocketFrame(fin: true, opcode: .text, maskKey: .random(), data: hello))
    }
}

/// One session's frames. Every call comes on the channel's event loop.
private final class SessionHandler: ChannelInboundHandler {
    typealias InboundIn = WebSocketFrame
    typealias OutboundOut = WebSocketFrame

    private let welcomed: EventLoopPromise<Void>
    private let live: NIOLockedValueBox<Int>
    private let onMessage: BenchSessions.MessageHandler
    private var isWelcomed = false
    private var isOver = false
    /// A text message split over several frames, until its last one.
    private var text = ByteBuffer()

    init(welcomed: EventLoopPromise<Void>, live: NIOLockedValueBox<Int>, onMessage: @escaping BenchSessions.MessageHandler) {
        self.welcomed = welcomed
        self.live = live
        self.onMessage = onMessage
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let frame = unwrapInboundIn(data)
        // A server sends its frames unmasked (RFC 6455 §5.1); unmaskedData also copes if one did not.
        var payload = frame.unmaskedData
        switch frame.opcode {
        case .text, .continuation:
            text.writeBuffer(&payload)
            guard frame.fin else { return }
            let message = String(buffer: text)
            text.clear()
            received(message, context: context)
        case .ping:
            send(payload, opcode: .pong, context: context)
        case .connectionClose:
            context.close(promise: nil)
        default:
            break
        }
    }

    private func received(_ message: String, context: ChannelHandlerContext) {
        guard isWelcomed else {
            guard message.contains(#""welcome""#) else {
                end(BenchFailure("expected welcome: \(message)"))
                context.close(promise: nil)
                return
            }
            isWelcomed = true
            live.withLockedValue { $0 += 1 }
            welcomed.succeed(())
            return
        }
        if let answer = onMessage(message) { send(answer, opcode: .text, context: context) }
    }

    func channelInactive(context: ChannelHandlerContext) {
        end(BenchFailure("the session ended before welcome"))
        context.fireChannelInactive()
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        end(error)
        context.close(promise: nil)
    }

    private func end(_ error: any Error) {
        guard !isOver else { return }
        isOver = true
        if isWelcomed { live.withLockedValue { $0 -= 1 } } else { welcomed.fail(error) }
    }

    private func send(_ string: String, opcode: WebSocketOpcode, context: ChannelHandlerContext) {
        send(context.channel.allocator.buffer(string: string), opcode: opcode, context: context)
    }

    /// RFC 6455 §5.3: a client masks every frame it sends.
    private func send(_ data: ByteBuffer, opcode: WebSocketOpcode, context: ChannelHandlerContext) {
        let frame = WebSocketFrame(fin: true, opcode: opcode, maskKey: .random(), data: data)
        context.writeAndFlush(wrapOutboundOut(frame), promise: nil)
    }
}
