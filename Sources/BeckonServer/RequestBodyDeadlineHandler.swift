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
            timer?.cancel()
            let loopBound = NIOLoopBound((self, context), eventLoop: context.eventLoop)
            timer = context.eventLoop.scheduleTask(in: timeout) {
                let (handler, context) = loopBound.value
                handler.perform(handler.deadline.deadlinePassed(), context: context)
            }
        case .cancel:
            timer?.cancel()
            timer = nil
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

    /// A route still reading the body gets an error, not a body cut short that would parse as
    /// whole (Hummingbird takes a closed stream for the body's end).
    private func expire(context: ChannelHandlerContext) {
        context.fireErrorCaught(error)
        context.close(promise: nil)
    }
}
