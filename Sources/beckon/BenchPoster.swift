import NIOCore
import NIOHTTP1
import NIOPosix

/// One poster of `beckon bench server`: `POST /v1/messages` over a keep-alive HTTP/1.1
/// connection, one request at a time, each written from the connection's event loop the moment
/// the answer before it ends.
///
/// The load generator shares this machine's two cores with the node it measures, so its own cost
/// per request is the node's loss. Driving the connection from a Swift task cost two thread
/// hand-offs a request (the loop wakes the task for each answer, the task hands each request back
/// to the loop): 22–30 µs of the client's CPU a message in `accept`, 16–21 µs on the loop. Like
/// wrk or h2load, this poster stays on its loop (docs/benchmarks-history.md, "A lighter load
/// generator").
enum BenchPoster {
    /// What a poster does next. Asked on its event loop, after each answer and after each wait,
    /// with the number of requests this poster has sent so far (over all its connections).
    enum Step: Sendable {
        /// Post this body now.
        case send(String)
        /// Ask again at this instant (an open-loop rate: the next message is not due yet).
        case wait(until: NIODeadline)
        /// Nothing more to post: close the connection.
        case done
    }

    /// Posts whatever `next` hands out until it says `.done`. A connection that fails loses the
    /// request in flight (counted in `failed`) and a new connection takes the rest; after
    /// `connectAttempts` failed connects in a row the poster gives up (each counted in `failed`).
    static func run(
        to endpoint: BenchEndpoint, on loop: any EventLoop, apiKey: String, connectAttempts: Int = 10,
        next: @escaping @Sendable (_ sent: Int) -> Step
    ) async -> PostStats {
        var stats = PostStats()
        var sent = 0
        var failedConnects = 0
        while failedConnects < connectAttempts {
            let finished = loop.makePromise(of: PostHandler.Outcome.self)
            let sentBefore = sent
            let connected = ClientBootstrap(group: loop)
                .channelOption(.tcpOption(.tcp_nodelay), value: 1)
                .channelInitializer { channel in
                    channel.eventLoop.makeCompletedFuture {
                        try channel.pipeline.syncOperations.addHTTPClientHandlers()
                        try channel.pipeline.syncOperations.addHandler(
                            PostHandler(endpoint: endpoint, apiKey: apiKey, sent: sentBefore, next: next, finished: finished))
                    }
                }
                .connect(host: endpoint.host, port: endpoint.port)
            do {
                _ = try await connected.get()
            } catch {
                stats.failed += 1
                failedConnects += 1
                finished.fail(error)
                continue
            }
            failedConnects = 0
            guard let outcome = try? await finished.futureResult.get() else { continue }
            stats.merge(outcome.stats)
            sent = outcome.sent
            if outcome.completed { break }
        }
        return stats
    }

    /// A `POST /v1/messages` body: one message to one user, with `payload` (a JSON object) as its payload.
    static func message(to user: String, payload: String) -> String {
        #"{"recipients":{"users":["\#(user)"]},"kind":"message","payload":\#(payload)}"#
    }
}

/// The poster's connection handler. Every call comes on the channel's event loop.
private final class PostHandler: ChannelInboundHandler {
    typealias InboundIn = HTTPClientResponsePart
    typealias OutboundOut = HTTPClientRequestPart

    struct Outcome: Sendable {
        var stats: PostStats
        /// Requests sent by this poster so far, this connection's included.
        var sent: Int
        /// The plan said `.done`; otherwise the connection ended first.
        var completed: Bool
    }

    private let head: HTTPRequestHead
    private let next: @Sendable (Int) -> BenchPoster.Step
    private let finished: EventLoopPromise<Outcome>
    private var stats = PostStats()
    private var sent: Int
    private var sentAt: NIODeadline?
    private var status = 0
    private var over = false

    init(
        endpoint: BenchEndpoint, apiKey: String, sent: Int, next: @escaping @Sendable (Int) -> BenchPoster.Step,
        finished: EventLoopPromise<Outcome>
    ) {
        var head = HTTPRequestHead(version: .http1_1, method: .POST, uri: "/v1/messages")
        head.headers.add(name: "Host", value: "\(endpoint.host):\(endpoint.port)")
        head.headers.add(name: "Content-Type", value: "application/json")
        head.headers.add(name: "Authorization", value: "Bearer \(apiKey)")
        self.head = head
        self.sent = sent
        self.next = next
        self.finished = finished
    }

    func channelActive(context: ChannelHandlerContext) {
        context.fireChannelActive()
        advance(context: context)
    }

    private func advance(context: ChannelHandlerContext) {
        guard !over else { return }
        switch next(sent) {
        case .send(let body):
            sent += 1
            var head = head
            let buffer = context.channel.allocator.buffer(string: body)
            head.headers.add(name: "Content-Length", value: String(buffer.readableBytes))
            sentAt = .now()
            context.write(wrapOutboundOut(.head(head)), promise: nil)
            context.write(wrapOutboundOut(.body(.byteBuffer(buffer))), promise: nil)
            context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: nil)
        case .wait(let deadline):
            let bound = NIOLoopBound((self, context), eventLoop: context.eventLoop)
            context.eventLoop.scheduleTask(deadline: deadline) {
                let (handler, context) = bound.value
                handler.advance(context: context)
            }
        case .done:
            finish(completed: true)
            context.close(promise: nil)
        }
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(let head):
            status = Int(head.status.code)
        case .body:
            break
        case .end:
            guard let sent = sentAt else { return }
            sentAt = nil
            stats.latencies.append((NIODeadline.now() - sent).nanoseconds)
            if (200..<300).contains(status) { stats.accepted += 1 } else { stats.refused += 1 }
            advance(context: context)
        }
    }

    func channelInactive(context: ChannelHandlerContext) {
        if sentAt != nil { stats.failed += 1 }
        finish(completed: false)
        context.fireChannelInactive()
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        context.close(promise: nil)
    }

    private func finish(completed: Bool) {
        guard !over else { return }
        over = true
        finished.succeed(Outcome(stats: stats, sent: sent, completed: completed))
    }
}
