import APNSCore
import Foundation
import NIOCore
import NIOHPACK
import NIOHTTP2

/// Where the answer to one request goes: the `send` that waits for it, resumed exactly once,
/// straight from the thread that finishes the request (no promise, no future, no callback).
/// Debug builds (the tests) use checked continuations, which trap on a second resume and report
/// one that is never resumed; release builds skip the check's allocation on the send path.
#if DEBUG
typealias APNSResponseContinuation = CheckedContinuation<APNSResponse, any Error>

func withAPNSResponseContinuation(_ body: (APNSResponseContinuation) -> Void) async throws -> APNSResponse {
    try await withCheckedThrowingContinuation(body)
}
#else
typealias APNSResponseContinuation = UnsafeContinuation<APNSResponse, any Error>

func withAPNSResponseContinuation(_ body: (APNSResponseContinuation) -> Void) async throws -> APNSResponse {
    try await withUnsafeThrowingContinuation(body)
}
#endif

/// One attempt at a request on its way to a connection.
///
/// A class: it passes through the pool, a batch and the open streams by reference, instead of
/// copying (and retaining every string of) the request at each step.
final class APNSStreamRequest: Sendable {
    let request: APNSRequest
    /// `bearer <JWT>` for token connections; nil on certificate connections.
    let authorization: String?
    let deadline: NIODeadline
    /// Resumed exactly once: whoever takes the request out of a queue, a batch or the open
    /// streams answers it.
    let continuation: APNSResponseContinuation

    init(request: APNSRequest, authorization: String?, deadline: NIODeadline, continuation: APNSResponseContinuation) {
        self.request = request
        self.authorization = authorization
        self.deadline = deadline
        self.continuation = continuation
    }

    func fail(_ error: any Error) { continuation.resume(throwing: error) }
}

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
final class APNSConnectionHandler: ChannelInboundHandler {
    typealias InboundIn = HTTP2Frame
    typealias OutboundOut = HTTP2Frame

    private struct OpenStream {
        let outbound: APNSStreamRequest
        var status: Int?
        var apnsID: UUID?
        var uniqueID: UUID?
        var body: ByteBuffer?
    }

    /// Client stream ids are odd and end at 2^31-1 (RFC 9113 §5.1.1); retire the connection before.
    static let lastUsableStreamID: Int32 = Int32.max - 2

    private let authority: String
    private let pingInterval: TimeAmount
    private let onEvent: (APNSConnectionEvent) -> Void
    private var streams: [HTTP2StreamID: OpenStream] = [:]
    private var nextStreamID: Int32 = 1
    private var isGoingAway = false
    private var lastActivity = NIODeadline.now()
    private var pingOutstanding = false
    private var tickTask: Scheduled<Void>?
    private var lastPingCheck = NIODeadline.now()
    private var context: ChannelHandlerContext?

    init(authority: String, pingInterval: TimeAmount, onEvent: @escaping (APNSConnectionEvent) -> Void) {
        self.authority = authority
        self.pingInterval = pingInterval
        self.onEvent = onEvent
    }

    func handlerAdded(context: ChannelHandlerContext) {
        self.context = context
        scheduleTick(on: context.eventLoop)
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        tickTask?.cancel()
        self.context = nil
    }

    /// Deadlines are checked by one periodic sweep, not a timer per stream: scheduling and
    /// cancelling a timer for every notification showed up in profiles of the send path.
    /// The sweep runs every 50 ms while streams are open, and only for PINGs when idle.
    static let busyTick = TimeAmount.milliseconds(50)
    private var idleTick: TimeAmount { min(pingInterval, .seconds(1)) }
    private var tickIsBusy = false

    private func scheduleTick(on eventLoop: any EventLoop) {
        tickIsBusy = !streams.isEmpty
        tickTask = eventLoop.assumeIsolated().scheduleTask(in: tickIsBusy ? Self.busyTick : idleTick) { [weak self] in
            guard let self, self.context != nil else { return }
            self.tick()
            self.scheduleTick(on: eventLoop)
        }
    }

    private func tick() {
        let now = NIODeadline.now()
        if !streams.isEmpty {
            for (id, stream) in streams where stream.outbound.deadline <= now { timedOut(id) }
        }
        // Apple: on a mostly idle connection, send a PING; idle connections are also reset
        // silently by middleboxes (apns.md C.1, G.6).
        if now - lastPingCheck >= pingInterval {
            lastPingCheck = now
            pingIfIdle(now: now)
        }
    }

    // MARK: Outbound

    /// The outbox's spare batch array, handed back and forth so that batches allocate nothing.
    var spareBatch: [APNSStreamRequest] = []

    /// Opens one stream per request and flushes once. Called on the event loop by the outbox.
    func send(_ batch: [APNSStreamRequest]) {
        guard let context else {
            // Removed from the pipeline: the connection is gone and APNs never saw these.
            for outbound in batch { outbound.fail(APNSConnectionError.goingAway) }
            onEvent(.streamsClosed(batch.count))
            return
        }
        lastActivity = .now()
        for outbound in batch { open(outbound, context: context) }
        if !tickIsBusy, !streams.isEmpty {
            // Leaving idle: deadlines need the fast sweep again.
            tickTask?.cancel()
            scheduleTick(on: context.eventLoop)
        }
        context.flush()
    }

    private func open(_ outbound: APNSStreamRequest, context: ChannelHandlerContext) {
        guard context.channel.isActive, !isGoingAway, nextStreamID <= Self.lastUsableStreamID else {
            outbound.fail(APNSConnectionError.goingAway)
            onEvent(.streamsClosed(1))
            return
        }
        let streamID = HTTP2StreamID(nextStreamID)
        nextStreamID += 2
        if nextStreamID > Self.lastUsableStreamID, !isGoingAway {
            isGoingAway = true
            onEvent(.goingAway(reason: "stream ids exhausted"))
        }

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

        streams[streamID] = OpenStream(outbound: outbound)
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
        isReading = true
        let frame = unwrapInboundIn(data)
        if frame.streamID == .rootStream {
            connectionFrame(frame.payload)
            return
        }
        guard var stream = streams[frame.streamID] else { return }  // Cancelled by its deadline.
        switch frame.payload {
        case .headers(let headers):
            let fields = headers.headers
            if stream.status == nil, let status = fields.first(name: ":status").flatMap({ Int($0) }) {
                stream.status = status
                // APNs echoes the id we sent; recognise it without parsing.
                let apnsID = fields.first(name: "apns-id")
                stream.apnsID = apnsID == stream.outbound.request.apnsIDHeader
                    ? stream.outbound.request.apnsID : apnsID.flatMap(UUID.init(hexString:))
                stream.uniqueID = fields.first(name: "apns-unique-id").flatMap(UUID.init(hexString:))
            }
            if headers.endStream { finish(frame.streamID, stream) } else { streams[frame.streamID] = stream }
        case .data(let data):
            consumedConnectionWindow(data.data.readableBytes + (data.paddingBytes.map { $0 + 1 } ?? 0), context: context)
            if case .byteBuffer(var bytes) = data.data {
                if stream.body == nil { stream.body = bytes } else { stream.body!.writeBuffer(&bytes) }
            }
            if data.endStream { finish(frame.streamID, stream) } else { streams[frame.streamID] = stream }
        case .rstStream(let code):
            fail(frame.streamID, APNSConnectionError.streamReset(code))
        default:
            break
        }
    }

    /// Without a stream multiplexer nobody else replenishes the connection's receive window
    /// (RFC 9113 §6.9): give back what DATA frames used once half of the initial 65,535 is gone,
    /// or the server stops sending answers after about 64 KB of error bodies.
    private func consumedConnectionWindow(_ bytes: Int, context: ChannelHandlerContext) {
        unacknowledgedBytes += bytes
        guard unacknowledgedBytes >= 32_768 else { return }
        let increment = unacknowledgedBytes
        unacknowledgedBytes = 0
        context.writeAndFlush(wrapOutboundOut(HTTP2Frame(streamID: .rootStream, payload: .windowUpdate(windowSizeIncrement: increment))), promise: nil)
    }
    private var unacknowledgedBytes = 0

    private func connectionFrame(_ payload: HTTP2Frame.FramePayload) {
        switch payload {
        case .settings(.settings(let settings)):
            // A SETTINGS frame without the parameter leaves the limit as it was; before any value,
            // HTTP/2 says "unlimited", but APNs always announces one.
            if let limit = settings.last(where: { $0.parameter == .maxConcurrentStreams }) {
                onEvent(.settings(maxConcurrentStreams: limit.value))
            } else if !sawSettings {
                onEvent(.settings(maxConcurrentStreams: 100))
            }
            sawSettings = true
        case .goAway(let lastStreamID, _, let opaqueData):
            isGoingAway = true
            // Streams above lastStreamID were not processed: fail them as "send elsewhere".
            for id in streams.keys where id > lastStreamID {
                fail(id, APNSConnectionError.goingAway)
            }
            onEvent(.goingAway(reason: opaqueData.flatMap(Self.goAwayReason)))
        case .ping(_, ack: true):
            pingOutstanding = false
        default:
            break
        }
    }
    private var sawSettings = false

    /// NIO closes streams on its own too (a reset it sent, a GOAWAY, a protocol error on the
    /// stream); a stream that ends without an answer must not be left waiting.
    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if let closed = event as? StreamClosedEvent, streams[closed.streamID] != nil {
            fail(closed.streamID, .streamReset(closed.reason ?? .cancel))
        }
        context.fireUserInboundEventTriggered(event)
    }

    func channelReadComplete(context: ChannelHandlerContext) {
        isReading = false
        lastActivity = .now()  // Once per read batch; only the PING check reads it.
        reportClosedStreams()
        context.fireChannelReadComplete()
    }

    /// Closed streams are counted during a read batch and reported once, at its end.
    private var isReading = false
    private var closedStreams = 0

    private func streamEnded() {
        closedStreams += 1
        if !isReading { reportClosedStreams() }
    }

    private func reportClosedStreams() {
        guard closedStreams > 0 else { return }
        let count = closedStreams
        closedStreams = 0
        onEvent(.streamsClosed(count))
    }

    func channelInactive(context: ChannelHandlerContext) {
        isReading = false
        for id in Array(streams.keys) { fail(id, APNSConnectionError.connectionClosed) }
        onEvent(.closed)
        context.fireChannelInactive()
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        // Connection-level protocol or TLS errors: the connection is unusable.
        context.close(promise: nil)
    }

    // MARK: Stream completion

    private func finish(_ id: HTTP2StreamID, _ stream: OpenStream) {
        streams.removeValue(forKey: id)
        var response = APNSResponse(status: stream.status ?? 0, apnsID: stream.apnsID, uniqueID: stream.uniqueID)
        if response.status != 200, let body = stream.body {
            let parsed = APNSResponse.parseErrorBody(Array(body.readableBytesView))
            response.reason = parsed.reason
            response.timestamp = parsed.timestamp
        }
        stream.outbound.continuation.resume(returning: response)
        streamEnded()
    }

    private func fail(_ id: HTTP2StreamID, _ error: APNSConnectionError) {
        guard let stream = streams.removeValue(forKey: id) else { return }
        stream.outbound.continuation.resume(throwing: error)
        streamEnded()
    }

    private func timedOut(_ id: HTTP2StreamID) {
        guard streams[id] != nil, let context else { return }
        fail(id, .deadlineExceeded)
        context.writeAndFlush(wrapOutboundOut(HTTP2Frame(streamID: id, payload: .rstStream(.cancel))), promise: nil)
    }

    /// A PING unanswered for a whole interval means the connection is dead.
    private func pingIfIdle(now: NIODeadline) {
        guard let context else { return }
        if pingOutstanding {
            context.close(promise: nil)
            return
        }
        guard now - lastActivity >= pingInterval else { return }
        pingOutstanding = true
        context.writeAndFlush(wrapOutboundOut(HTTP2Frame(streamID: .rootStream, payload: .ping(HTTP2PingData(), ack: false))), promise: nil)
    }

    /// APNs puts `{"reason": "..."}` in GOAWAY's debug data (apns.md C.1).
    private static func goAwayReason(_ buffer: ByteBuffer) -> String? {
        APNSResponse.parseErrorBody(Array(buffer.readableBytesView)).reason?.rawValue
            ?? buffer.getString(at: buffer.readerIndex, length: buffer.readableBytes)
    }
}
