import NIOCore
import NIOHTTP1

/// One POST and the promise of its answer's status, written into a receiver's connection.
struct WebhookExchange: Sendable {
    var head: HTTPRequestHead
    var body: ByteBuffer
    var answer: EventLoopPromise<Int>
}

/// Turns a `WebhookExchange` into the request's parts, and the response's head and end into the
/// answer: the connection carries one exchange at a time (HTTP/1.1, no pipelining), kept open
/// between them unless the receiver says otherwise.
final class WebhookExchangeHandler: ChannelDuplexHandler {
    typealias InboundIn = HTTPClientResponsePart
    typealias OutboundIn = WebhookExchange
    typealias OutboundOut = HTTPClientRequestPart

    private var answer: EventLoopPromise<Int>?
    private var status = 0
    private var keepAlive = true

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        let exchange = unwrapOutboundIn(data)
        answer = exchange.answer
        context.write(wrapOutboundOut(.head(exchange.head)), promise: nil)
        context.write(wrapOutboundOut(.body(.byteBuffer(exchange.body))), promise: nil)
        context.write(wrapOutboundOut(.end(nil)), promise: promise)
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(let head):
            status = Int(head.status.code)
            keepAlive = head.isKeepAlive
        case .body:
            break  // The receiver's words are not read: only its status counts.
        case .end:
            let answer = answer
            self.answer = nil
            answer?.succeed(status)
            if !keepAlive { context.close(promise: nil) }
        }
    }

    func channelInactive(context: ChannelHandlerContext) {
        answer?.fail(WebhookTransportError.closed)
        answer = nil
        context.fireChannelInactive()
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        answer?.fail(error)
        answer = nil
        context.close(promise: nil)
    }
}
