import BeckonProtocol
import Hummingbird
import HummingbirdCore
import Logging
import NIOCore
import NIOHTTP1
import NIOHTTPTypes
import NIOHTTPTypesHTTP1
import NIOWebSocket

/// The listener's child channel: HTTP/1.1 for the API (through Hummingbird's responder), and
/// `GET /v1/sync` with `Upgrade: websocket` upgraded to a sync session.
///
/// Unlike hummingbird-websocket's `HTTP1WebSocketUpgradeChannel`, an upgraded connection keeps
/// no Swift task: the session runs in `SyncChannelHandler` on the connection's event loop, and
/// `handle(value:)` returns once the upgrade is done. The task that library keeps per connection
/// (its handler, auto-ping and our reader) holds about 20 KiB of async frames for as long as the
/// connection lives, most of an idle session's memory.
struct BeckonHTTPChannel: ServerChildChannel, HTTPChannelHandler {
    enum Negotiated: Sendable {
        /// The session runs in the channel's pipeline.
        case upgraded
        /// Not an upgrade: an HTTP connection for the API.
        case http(NIOAsyncChannel<HTTPRequestPart, HTTPResponsePart>)
        /// An upgrade refused with an answer (401, 429, …).
        case refused(NIOAsyncChannel<HTTPRequestPart, HTTPResponsePart>, APIError)
    }

    struct Value: ServerChildChannelValue {
        let negotiated: EventLoopFuture<Negotiated>
        let channel: any Channel
    }

    let responder: HTTPChannelHandler.Responder
    let gateway: SyncGateway
    let http1: HTTP1Channel.Configuration
    /// How long a new connection has to deliver its first request head (`http.request-head-seconds`).
    let requestHeadTimeout: TimeAmount?
    /// How long each request's body may take after its head (`http.body-seconds`).
    let bodyTimeout: TimeAmount?

    init(
        responder: @escaping HTTPChannelHandler.Responder, gateway: SyncGateway, http1: HTTP1Channel.Configuration = .init(),
        requestHeadTimeout: TimeAmount? = nil, bodyTimeout: TimeAmount? = nil
    ) {
        self.responder = responder
        self.gateway = gateway
        self.http1 = http1
        self.requestHeadTimeout = requestHeadTimeout
        self.bodyTimeout = bodyTimeout
    }

    /// Every connection's receive buffer starts small: most are idle sync sessions whose frames
    /// are tiny, and each channel keeps its last buffer for the next read (NIO's default starts
    /// at 2 KiB).
    static let receiveAllocator = AdaptiveRecvByteBufferAllocator(minimum: 64, initial: 512, maximum: 65536)

    func setup(channel: any Channel, logger: Logger) -> EventLoopFuture<Value> {
        channel.eventLoop.makeCompletedFuture {
            try channel.syncOptions?.setOption(ChannelOptions.recvAllocator, value: Self.receiveAllocator)
            // The decision on the upgrade request, for the two ways the negotiation ends.
            let decision = NIOLoopBoundBox<SyncUpgradeDecision?>(nil, eventLoop: channel.eventLoop)
            let gateway = self.gateway
            let upgrader = NIOTypedWebSocketServerUpgrader<Negotiated>(
                maxFrameSize: gateway.limits.maximumFrameBytes,
                // SyncChannelHandler answers decoding errors itself, with the session's one close frame.
                enableAutomaticErrorHandling: false,
                shouldUpgrade: { channel, head in
                    let promise = channel.eventLoop.makePromise(of: SyncUpgradeDecision.self)
                    promise.completeWithTask { await gateway.decide(head) }
                    return promise.futureResult.map { result in
                        decision.value = result
                        guard case .upgrade(_, let headers) = result else { return nil }
                        return headers
                    }
                },
                upgradePipelineHandler: { channel, _ in
                    channel.eventLoop.makeCompletedFuture {
                        guard case .upgrade(let device, _) = decision.value else {
                            preconditionFailure("upgraded without a device")
                        }
                        decision.value = nil
                        try SyncConnection.start(device: device, channel: channel, gateway: gateway)
                        return Negotiated.upgraded
                    }
                })
            let configuration = NIOTypedHTTPServerUpgradeConfiguration(
                upgraders: [upgrader],
                notUpgradingCompletionHandler: { channel in
                    channel.eventLoop.makeCompletedFuture {
                        if let bodyTimeout = self.bodyTimeout {
                            try channel.pipeline.syncOperations.addHandler(RequestBodyDeadlineHandler(timeout: bodyTimeout))
                        }
                        try channel.pipeline.syncOperations.addHandler(HTTP1ToHTTPServerCodec(secure: false))
                        try channel.pipeline.syncOperations.addHandlers(self.http1.additionalChannelHandlers())
                        try channel.pipeline.syncOperations.addHandler(
                            HTTPConnectionStateHandler(idleTimeout: self.http1.idleTimeout.map { .init($0) }, logger: logger))
                        let http = try NIOAsyncChannel<HTTPRequestPart, HTTPResponsePart>(
                            wrappingChannelSynchronously: channel, configuration: .init(isOutboundHalfClosureEnabled: true))
                        if case .refuse(let error) = decision.value { return Negotiated.refused(http, error) }
                        return Negotiated.http(http)
                    }
                })
            // As Hummingbird configures its HTTP/1 channels.
            var pipeline = NIOUpgradableHTTPServerPipelineConfiguration<Negotiated>(upgradeConfiguration: configuration)
            pipeline.enablePipelining = false
            pipeline.enableErrorHandling = false
            pipeline.enableResponseHeaderValidation = false
            pipeline.decoderConfiguration.maxHeaderFieldSize = http1.httpDecoder.maxHeaderFieldSize
            pipeline.decoderConfiguration.maxHeaderListSize = http1.httpDecoder.maxHeaderListSize
            pipeline.decoderConfiguration.maxHeaderFieldCount = http1.httpDecoder.maxHeaderFieldCount
            let negotiated = try channel.pipeline.syncOperations.configureUpgradableHTTPServerPipeline(configuration: pipeline)
            // Slow headers (slowloris): the negotiation ends when the first request head is in.
            // Until then only this deadline bounds the connection; a byte now and then does not
            // reset it, as a read-idle timer would be.
            if let requestHeadTimeout {
                let deadline = channel.eventLoop.scheduleTask(in: requestHeadTimeout) { channel.close(promise: nil) }
                negotiated.whenComplete { _ in deadline.cancel() }
            }
            return Value(negotiated: negotiated, channel: channel)
        }
    }

    func handle(value: Value, logger: Logger) async {
        do {
            switch try await value.negotiated.get() {
            case .upgraded:
                return
            case .http(let http):
                await handleHTTP(asyncChannel: http, logger: logger)
            case .refused(let http, let error):
                await refuse(http, with: error, logger: logger)
            }
        } catch let error as ChannelError where error == .inputClosed {
            logger.trace("connection closed during the upgrade")
        } catch {
            logger.debug("upgrade failed", metadata: ["error": "\(error)"])
        }
    }

    /// Answers a refused upgrade with the API's error body, then closes the connection.
    private func refuse(_ http: NIOAsyncChannel<HTTPRequestPart, HTTPResponsePart>, with error: APIError, logger: Logger) async {
        // The body APIErrorMiddleware gives every API error.
        let body = ByteBuffer(bytes: error.body)
        var headers = error.headers
        headers[.contentType] = "application/json; charset=utf-8"
        headers[.contentLength] = String(body.readableBytes)
        headers[.connection] = "close"
        do {
            try await http.executeThenClose { _, outbound in
                try await outbound.write(contentsOf: [
                    .head(HTTPResponse(status: error.status, headerFields: headers)), .body(body), .end(nil),
                ])
            }
        } catch {
            logger.trace("could not answer a refused upgrade", metadata: ["error": "\(error)"])
        }
    }
}
