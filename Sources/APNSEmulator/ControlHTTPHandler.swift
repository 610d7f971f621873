import NIOCore
import NIOHTTP1

/// One HTTP/1.1 control connection: collects a request and its body, asks the router, answers
/// with JSON. Keep-alive is honoured; requests on one connection are answered in order.
final class ControlHTTPHandler: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias OutboundOut = HTTPServerResponsePart

    /// Control bodies are small JSON objects; anything bigger is a mistake.
    static let maximumBodySize = 1 << 20

    private let router: ControlRouter
    private var head: HTTPRequestHead?
    private var body: [UInt8] = []
    private var tooLarge = false

    init(router: ControlRouter) {
        self.router = router
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(let head):
            self.head = head
            body.removeAll(keepingCapacity: true)
            tooLarge = false
        case .body(let buffer):
            if body.count + buffer.readableBytes > Self.maximumBodySize {
                tooLarge = true
            } else {
                body.append(contentsOf: buffer.readableBytesView)
            }
        case .end:
            guard let head else { return }
            self.head = nil
            let response: ControlResponse =
                tooLarge
                ? ControlResponse(error: ControlError(status: 413, code: "body-too-large", message: "bodies are at most 1 MiB"))
                : router.handle(method: head.method.rawValue, uri: head.uri, body: body)
            write(response, for: head, context: context)
        }
    }

    private func write(_ response: ControlResponse, for request: HTTPRequestHead, context: ChannelHandlerContext) {
        let keepAlive = request.isKeepAlive
        var headers = HTTPHeaders()
        headers.add(name: "content-type", value: "application/json")
        headers.add(name: "content-length", value: String(response.body.count))
        if !keepAlive { headers.add(name: "connection", value: "close") }
        let head = HTTPResponseHead(
            version: request.version, status: HTTPResponseStatus(statusCode: response.status), headers: headers
        )
        context.write(wrapOutboundOut(.head(head)), promise: nil)
        if request.method != .HEAD {
            let buffer = context.channel.allocator.buffer(bytes: response.body)
            context.write(wrapOutboundOut(.body(.byteBuffer(buffer))), promise: nil)
        }
        let done = context.eventLoop.makePromise(of: Void.self)
        context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: done)
        if !keepAlive {
            let channel = context.channel
            done.futureResult.whenComplete { _ in channel.close(promise: nil) }
        }
    }

    func errorCaught(context: ChannelHandlerContext, error: Error) {
        context.close(promise: nil)
    }
}
