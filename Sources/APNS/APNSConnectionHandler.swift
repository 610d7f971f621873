import APNSCore
import NIOCore
import NIOHPACK
import NIOHTTP2

/// What a connection tells its pool. Delivered on the connection's event loop.
enum APNSConnectionEvent: Sendable {
    case settings(maxConcurrentStreams: Int)
    case goingAway(reason: String?)
    /// Streams that ended (reported once per read batch, not once per stream).
    case streamsClosed(Int)
    case closed
}

/// The APNs side of one HTTP/2 connection: turns requests into streams and frames into responses.
///
/// It sits after `NIOHTTP2Handler` in its inline mode and speaks frames directly, one dictionary
/// entry per open stream, with no channel per stream: that is what keeps the send path cheap.
/// Requests arrive in batches from the connection's `APNSStreamOutbox`, which calls `send(_:)` on
/// the event loop directly rather than through the pipeline (no `NIOAny` box and no write promise
/// per request).
///
/// Every decision is `APNSConnectionStateMachine`'s: this class decodes frames, calls the machine
/// and performs what it answers (write frames, resume requests, tell the pool, close).
final class APNSConnectionHandler: ChannelInboundHandler {
    typealias InboundIn = HTTP2Frame
    typealias OutboundOut = HTTP2Frame
    typealias StateMachine = APNSConnectionStateMachine<APNSStreamRequest>

    private let authority: String
    private let onEvent: (APNSConnectionEvent) -> Void
    private var machine: StateMachine
    private var context: ChannelHandlerContext?
    private var tickTask: Scheduled<Void>?

    init(authority: String, pingInterval: TimeAmount, onEvent: @escaping (APNSConnectionEvent) -> Void) {
        self.authority = authority
        self.onEvent = onEvent
        self.machine = StateMachine(pingInterval: pingInterval, now: .now())
    }

    func handlerAdded(context: ChannelHandlerContext) {
        self.context = context
        scheduleTick(on: context.eventLoop)
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        tickTask?.cancel()
        self.context = nil
    }

    // MARK: Outbound

    /// The outbox's spare batch array, handed back and forth so that batches allocate nothing.
    var spareBatch: [APNSStreamRequest] = []

    /// Opens one stream per request and flushes once. Called on the event loop by the outbox.
    func send(_ batch: [APNSStreamRequest]) {
        // Removed from the pipeline (no context): the connection is gone and APNs never saw these.
        let context = self.context
        let channelIsActive = context?.channel.isActive ?? false
        for outbound in batch {
            switch machine.streamRequested(outbound, channelIsActive: channelIsActive) {
            case .open(let id):
                write(outbound, on: id, context: context!)  // Only opened on an active channel.
            case .openAndRetire(let id):
                write(outbound, on: id, context: context!)
                onEvent(.goingAway(reason: "stream ids exhausted"))
            case .refuse(let error):
                outbound.fail(error)
                onEvent(.streamsClosed(1))
            }
        }
        guard let context else { return }
        switch machine.batchSent(now: .now()) {
        case .flush:
            break
        case .flushAndSpeedUpTicks:
            tickTask?.cancel()
            scheduleTick(on: context.eventLoop)
        }
        context.flush()
    }

    private func write(_ outbound: APNSStreamRequest, on streamID: HTTP2StreamID, context: ChannelHandlerContext) {
        // Every value below is a string built once (per token, per request or per connection):
        // the header list is the only allocation here besides the body.
        var headers = HPACKHeaders()
        headers.reserveCapacity(11)
        headers.add(name: ":method", value: "POST")
        headers.add(name: ":scheme", value: "https")
        headers.add(name: ":authority", value: authority)
        // Apple: encode :path and authorization as literals without indexing (apns.md A.2).
        headers.add(name: ":path", value: outbound.request.path, indexing: .nonIndexable)
        if let authorization = outbound.authorization {
            headers.add(name: "authorization", value: authorization, indexing: .nonIndexable)
        }
        headers.add(name: "apns-push-type", value: outbound.request.pushType.rawValue)
        headers.add(name: "apns-topic", value: outbound.request.topic)
        headers.add(name: "apns-priority", value: outbound.request.priority.headerValue)
        // Apple: apns-id, apns-expiration and apns-collapse-id change per request; don't index them.
        headers.add(name: "apns-id", value: outbound.request.apnsIDHeader, indexing: .nonIndexable)
        if let expiration = outbound.request.expiration.headerValue {
            headers.add(name: "apns-expiration", value: expiration, indexing: .nonIndexable)
        }
        if let collapseID = outbound.request.collapseID {
            headers.add(name: "apns-collapse-id", value: collapseID, indexing: .nonIndexable)
        }
        headers.add(name: "content-length", value: String(outbound.request.payload.count))

        var body = context.channel.allocator.buffer(capacity: outbound.request.payload.count)
        body.writeBytes(outbound.request.payload)

        // A write that fails here is followed by channelInactive, and the deadline sweep catches
        // anything else, so no per-request promise is needed to notice it.
        context.write(wrapOutboundOut(HTTP2Frame(streamID: streamID, payload: .headers(.init(headers: headers)))), promise: nil)
        context.write(
            wrapOutboundOut(HTTP2Frame(streamID: streamID, payload: .data(.init(data: .byteBuffer(body), endStream: true)))),
            promise: nil
        )
    }

    // MARK: Inbound

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let frame = unwrapInboundIn(data)
        switch frame.payload {
        case .headers(let headers):
            perform(machine.headersReceived(headers.headers, endStream: headers.endStream, on: frame.streamID))
        case .data(let data):
            let flowControlled = data.data.readableBytes + (data.paddingBytes.map { $0 + 1 } ?? 0)
            if case .sendWindowUpdate(let increment) = machine.connectionWindowConsumed(flowControlled) {
                context.writeAndFlush(
                    wrapOutboundOut(HTTP2Frame(streamID: .rootStream, payload: .windowUpdate(windowSizeIncrement: increment))),
                    promise: nil
                )
            }
            let bytes: ByteBuffer? = if case .byteBuffer(let buffer) = data.data { buffer } else { nil }
            perform(machine.dataReceived(bytes, endStream: data.endStream, on: frame.streamID))
        case .rstStream(let code):
            perform(machine.resetReceived(code, on: frame.streamID))
        case .settings(.settings(let settings)):
            if case .reportMaxConcurrentStreams(let limit) = machine.settingsReceived(settings) {
                onEvent(.settings(maxConcurrentStreams: limit))
            }
        case .goAway(let lastStreamID, _, let opaqueData):
            switch machine.goAwayReceived(lastStreamID: lastStreamID, reason: opaqueData.flatMap(Self.goAwayReason)) {
            case .none:
                break
            case .goingAway(let failing, let reason):
                for outbound in failing { outbound.fail(APNSConnectionError.goingAway) }
                onEvent(.goingAway(reason: reason))
            }
        case .ping(_, ack: true):
            machine.pingAckReceived()
        default:
            break
        }
    }

    private func perform(_ action: StateMachine.StreamAction) {
        switch action {
        case .none: break
        case .succeed(let outbound, let response): outbound.continuation.resume(returning: response)
        case .fail(let outbound, let error): outbound.fail(error)
        }
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if let closed = event as? StreamClosedEvent {
            switch machine.streamClosed(closed.streamID, reason: closed.reason) {
            case .none:
                break
            case .fail(let outbound, let error):
                outbound.fail(error)
            case .failAndReport(let outbound, let error, let count):
                outbound.fail(error)
                onEvent(.streamsClosed(count))
            }
        }
        context.fireUserInboundEventTriggered(event)
    }

    func channelReadComplete(context: ChannelHandlerContext) {
        if case .reportClosedStreams(let count) = machine.readComplete(now: .now()) {
            onEvent(.streamsClosed(count))
        }
        context.fireChannelReadComplete()
    }

    func channelInactive(context: ChannelHandlerContext) {
        if case .reportClosed(let failing) = machine.channelInactive() {
            for outbound in failing { outbound.fail(APNSConnectionError.connectionClosed) }
            onEvent(.closed)
        }
        context.fireChannelInactive()
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        // Connection-level protocol or TLS errors: the connection is unusable.
        context.close(promise: nil)
    }

    // MARK: Ticks

    private func scheduleTick(on eventLoop: any EventLoop) {
        tickTask = eventLoop.assumeIsolated().scheduleTask(in: machine.nextTick()) { [weak self] in
            guard let self, self.context != nil else { return }
            self.tick()
            self.scheduleTick(on: eventLoop)
        }
    }

    private func tick() {
        guard let context else { return }
        let now = NIODeadline.now()
        switch machine.sweepDeadlines(now: now) {
        case .none:
            break
        case .expire(let expired, let closedStreams):
            for (id, outbound) in expired {
                outbound.fail(APNSConnectionError.deadlineExceeded)
                context.write(wrapOutboundOut(HTTP2Frame(streamID: id, payload: .rstStream(.cancel))), promise: nil)
            }
            context.flush()
            onEvent(.streamsClosed(closedStreams))
        }
        switch machine.keepAliveCheck(now: now) {
        case .none:
            break
        case .ping:
            context.writeAndFlush(wrapOutboundOut(HTTP2Frame(streamID: .rootStream, payload: .ping(HTTP2PingData(), ack: false))), promise: nil)
        case .close:
            context.close(promise: nil)
        }
    }

    /// APNs puts `{"reason": "..."}` in GOAWAY's debug data (apns.md C.1).
    private static func goAwayReason(_ buffer: ByteBuffer) -> String? {
        APNSResponse.parseErrorBody(Array(buffer.readableBytesView)).reason?.rawValue
            ?? buffer.getString(at: buffer.readerIndex, length: buffer.readableBytes)
    }
}
