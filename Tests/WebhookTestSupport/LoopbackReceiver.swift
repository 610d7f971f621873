import Foundation
import NIOConcurrencyHelpers
import NIOCore
import NIOHTTP1
import NIOPosix

/// A webhook receiver on 127.0.0.1 for the tests (BeckonEventsTests, BeckonServerTests): keeps
/// every request it gets and answers each with the status `answer` gives it (its number, from 1),
/// or nil: no answer at all (a receiver that hangs).
public final class LoopbackReceiver: Sendable {
    public struct Received: Sendable {
        public var headers: [String: String]
        public var body: [UInt8]
    }

    public let port: Int
    private let channel: any Channel
    private let state: NIOLockedValueBox<[Received]>

    public var received: [Received] { state.withLockedValue { $0 } }

    public init(answer: @escaping @Sendable (Int) -> Int? = { _ in 204 }) async throws {
        let state = NIOLockedValueBox<[Received]>([])
        channel = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.configureHTTPServerPipeline()
                    try channel.pipeline.syncOperations.addHandler(Handler(state: state, answer: answer))
                }
            }
            .bind(host: "127.0.0.1", port: 0).get()
        port = channel.localAddress!.port!
        self.state = state
    }

    public func close() async throws { try await channel.close() }

    private final class Handler: ChannelInboundHandler, Sendable {
        typealias InboundIn = HTTPServerRequestPart
        typealias OutboundOut = HTTPServerResponsePart
        let state: NIOLockedValueBox<[Received]>
        let answer: @Sendable (Int) -> Int?
        // Touched on the connection's event loop only.
        nonisolated(unsafe) var head: HTTPRequestHead?
        nonisolated(unsafe) var body: [UInt8] = []

        init(state: NIOLockedValueBox<[Received]>, answer: @escaping @Sendable (Int) -> Int?) {
            self.state = state
            self.answer = answer
        }

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            switch unwrapInboundIn(data) {
            case .head(let head):
                self.head = head
                body = []
            case .body(var buffer):
                body += buffer.readBytes(length: buffer.readableBytes) ?? []
            case .end:
                var headers: [String: String] = [:]
                for (name, value) in head?.headers ?? [:] { headers[name.lowercased()] = value }
                let number = state.withLockedValue { received in
                    received.append(Received(headers: headers, body: body))
                    return received.count
                }
                guard let status = answer(number) else { return }
                var response = HTTPResponseHead(version: .http1_1, status: HTTPResponseStatus(statusCode: status))
                response.headers.add(name: "Content-Length", value: "0")
                context.write(wrapOutboundOut(.head(response)), promise: nil)
                context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: nil)
            }
        }
    }
}
