import APNSCore
import Foundation
import NIOCore
import NIOHPACK
import NIOHTTP2

/// One request on its way to a connection.
struct APNSStreamRequest: Sendable {
    var request: APNSRequest
    /// `bearer <JWT>` for token connections; nil on certificate connections.
    var authorization: String?
    var deadline: NIODeadline
    var promise: EventLoopPromise<APNSResponse>
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
final class APNSConnectionHandler: ChannelDuplexHandler {
    typealias InboundIn = HTTP2Frame
    typealias OutboundIn = APNSStreamRequest
    typealias OutboundOut = HTTP2Frame

    private struct OpenStream {
        var promise: EventLoopPromise<APNSResponse>
        var timeout: Scheduled<Void>?
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
    private var pingTask: Scheduled<Void>?
    private var context: ChannelHandlerContext?

    init(authority: String, pingInterval: TimeAmount, onEvent: @escaping (APNSConnectionEvent) -> Void) {
        self.authority = authority
        self.pingInterval = pingInterval
        self.onEvent = onEvent
    }

    func handlerAdded(context: ChannelHandlerContext) {
        self.context = context
        // Apple: on a mostly idle connection, send a PING; idle connections are also reset
        // silently by middleboxes (apns.md C.1, G.6). A PING unanswered for a whole interval
        // means the connection is dead.
        schedulePing(on: context.eventLoop)
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        pingTask?.cancel()
        self.context = nil
    }

    private func schedulePing(on eventLoop: any EventLoop) {
        pingTask = eventLoop.assumeIsolated().scheduleTask(in: pingInterval) { [weak self] in
            guard let self else { return }
            self.pingIfIdle()
            if self.context != nil { self.schedulePing(on: eventLoop) }
        }
    }

    // MARK: Outbound

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        let outbound = unwrapOutboundIn(data)
        promise?.succeed()
        guard context.channel.isActive, !isGoingAway, nextStreamID <= Self.lastUsableStreamID else {
            outbound.promise.fail(APNSConnectionError.goingAway)
            onEvent(.streamsClosed(1))
            return
        }
        let streamID = HTTP2StreamID(nextStreamID)
        nextStreamID += 2
        if nextStreamID > Self.lastUsableStreamID, !isGoingAway {
            isGoingAway = true
            onEvent(.goingAway(reason: "stream ids exhausted"))
        }

        let request = outbound.request
        var headers = HPACKHeaders()
        headers.reserveCapacity(12)
        headers.add(name: ":method", value: "POST")
        headers.add(name: ":scheme", value: "https")
        headers.add(name: ":authority", value: authority)
        // Apple: encode :path and authorization as literals without indexing (apns.md A.2).
        headers.add(name: ":path", value: request.path, indexing: .nonIndexable)
        if let authorization = outbound.authorization {
            headers.add(name: "authorization", value: authorization, indexing: .nonIndexable)
        }
        for (name, value) in request.headers {
            let indexing: HPACKIndexing = (name == "apns-id" || name == "apns-expiration" || name == "apns-collapse-id")
                ? .nonIndexable : .indexable
            headers.add(name: name, value: value, indexing: indexing)
        }
        headers.add(name: "content-length", value: String(request.payload.count))

        var body = context.channel.allocator.buffer(capacity: request.payload.count)
        body.writeBytes(request.payload)

        let timeout = context.eventLoop.assumeIsolated().scheduleTask(deadline: outbound.deadline) { [weak self] () -> Void in
            self?.timedOut(streamID)
        }
        streams[streamID] = OpenStream(promise: outbound.promise, timeout: timeout)
        lastActivity = .now()
        // If HEADERS cannot be written (the connection died under us), APNs never saw the request.
        let headersWritten = context.eventLoop.makePromise(of: Void.self)
        headersWritten.futureResult.assumeIsolated().whenFailure { [weak self] _ in
            self?.fail(streamID, .goingAway)
        }
        context.write(wrapOutboundOut(HTTP2Frame(streamID: streamID, payload: .headers(.init(headers: headers)))), promise: headersWritten)
        context.write(
            wrapOutboundOut(HTTP2Frame(streamID: streamID, payload: .data(.init(data: .byteBuffer(body), endStream: true)))),
            promise: nil
        )
    }

    // MARK: Inbound

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        isReading = true
        let frame = unwrapInboundIn(data)
        lastActivity = .now()
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
                stream.apnsID = fields.first(name: "apns-id").flatMap(UUID.init(hexString:))
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
        stream.timeout?.cancel()
        var response = APNSResponse(status: stream.status ?? 0, apnsID: stream.apnsID, uniqueID: stream.uniqueID)
        if response.status != 200, let body = stream.body {
            let parsed = APNSResponse.parseErrorBody(Array(body.readableBytesView))
            response.reason = parsed.reason
            response.timestamp = parsed.timestamp
        }
        stream.promise.succeed(response)
        streamEnded()
    }

    private func fail(_ id: HTTP2StreamID, _ error: APNSConnectionError) {
        guard let stream = streams.removeValue(forKey: id) else { return }
        stream.timeout?.cancel()
        stream.promise.fail(error)
        streamEnded()
    }

    private func timedOut(_ id: HTTP2StreamID) {
        guard streams[id] != nil, let context else { return }
        fail(id, .deadlineExceeded)
        context.writeAndFlush(wrapOutboundOut(HTTP2Frame(streamID: id, payload: .rstStream(.cancel))), promise: nil)
    }

    private func pingIfIdle() {
        guard let context else { return }
        if pingOutstanding {
            context.close(promise: nil)  // The previous PING went unanswered for a whole interval.
            return
        }
        guard NIODeadline.now() - lastActivity >= pingInterval else { return }
        pingOutstanding = true
        context.writeAndFlush(wrapOutboundOut(HTTP2Frame(streamID: .rootStream, payload: .ping(HTTP2PingData(), ack: false))), promise: nil)
    }

    /// APNs puts `{"reason": "..."}` in GOAWAY's debug data (apns.md C.1).
    private static func goAwayReason(_ buffer: ByteBuffer) -> String? {
        APNSResponse.parseErrorBody(Array(buffer.readableBytesView)).reason?.rawValue
            ?? buffer.getString(at: buffer.readerIndex, length: buffer.readableBytes)
    }
}
