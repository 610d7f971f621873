import NIOCore
import NIOHTTP1

/// Closes an HTTP/1 connection whose request body is not complete `timeout` after its head
/// (`http.body-seconds`), answering 408 first when nothing was answered yet. Sits between NIO's
/// HTTP/1 codec and Hummingbird's; the decisions are `RequestBodyDeadline`'s.
final class RequestBodyDeadlineHandler: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias InboundOut = HTTPServerRequestPart
    typealias OutboundIn = HTTPServerResponsePart
    typealias OutboundOut = HTTPServerResponsePart

    private let timeout: TimeAmount
    /// What a request past the deadline is told, and what a route still reading its body gets.
    private let error: APIError
    private var deadline = RequestBodyDeadline()
    /// When the body of the request in progress must be complete; nil while none is awaited.
    private var due: NIODeadline?
    /// At most one timer a connection: armed for the first deadline and moved on when it fires
    /// before the current one, so the requests of a keep-alive connection cost no timer each
    /// (scheduling and cancelling one per request was 1.8% of a node's time in the ingest
    /// benchmark).
    private var timer: Scheduled<Void>?

    init(timeout: TimeAmount) {
        self.timeout = timeout
        self.error = .requestTimeout(seconds: timeout.nanoseconds / 1_000_000_000)
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let action: RequestBodyDeadline.Action
        switch unwrapInboundIn(data) {
        case .head(let head):
            // Most requests (GETs, the health check) have no body: no timer for them.
            action = deadline.headReceived(expectsBody: Self.expectsBody(head))
        case .end: action = deadline.endReceived()
        case .body: action = .none
        }
        perform(action, context: context)
        if deadline.forwardsInbound { context.fireChannelRead(data) }
    }

    private static func expectsBody(_ head: HTTPRequestHead) -> Bool {
        if head.headers.contains(name: "transfer-encoding") { return true }
        return head.headers.first(name: "content-length").map { $0 != "0" } ?? false
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        switch unwrapOutboundIn(data) {
        case .head: deadline.responseHeadSent()
        case .end: deadline.responseEnded()
        case .body: break
        }
        context.write(data, promise: promise)
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        timer?.cancel()
    }

    func channelInactive(context: ChannelHandlerContext) {
        timer?.cancel()
        context.fireChannelInactive()
    }

    private func perform(_ action: RequestBodyDeadline.Action, context: ChannelHandlerContext) {
        switch action {
        case .none:
            break
        case .arm:
            let due = NIODeadline.now() + timeout
            self.due = due
            if timer == nil { schedule(at: due, context: context) }
        case .cancel:
            due = nil
        case .answerTimeoutAndClose:
            let body = context.channel.allocator.buffer(bytes: error.body)
            let head = HTTPResponseHead(version: .http1_1, status: .requestTimeout, headers: [
                "Content-Type": "application/json; charset=utf-8", "Content-Length": "\(body.readableBytes)",
                "Connection": "close",
            ])
            context.write(wrapOutboundOut(.head(head)), promise: nil)
            context.write(wrapOutboundOut(.body(.byteBuffer(body))), promise: nil)
            context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: nil)
            expire(context: context)
        case .close:
            expire(context: context)
        }
    }

    private func schedule(at deadline: NIODeadline, context: ChannelHandlerContext) {
        let loopBound = NIOLoopBound((self, context), eventLoop: context.eventLoop)
        timer = context.eventLoop.scheduleTask(deadline: deadline) {
            let (handler, context) = loopBound.value
            handler.timerFired(context: context)
        }
    }

    /// The deadline it was armed for has come: the current request's may be later (a request
    /// that ended and another that began since), or none may be awaited any more.
    private func timerFired(context: ChannelHandlerContext) {
        timer = nil
        guard let due else { return }
        if due > .now() { return schedule(at: due, context: context) }
        self.due = nil
        perform(deadline.deadlinePassed(), context: context)
    }

    /// A route still reading the body gets an error, not a body cut short that would parse as
    /// whole (Hummingbird takes a closed stream for the body's end).
    private func expire(context: ChannelHandlerContext) {
        context.fireErrorCaught(error)
        context.close(promise: nil)
    }
}
