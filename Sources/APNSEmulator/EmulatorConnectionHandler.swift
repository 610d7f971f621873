import APNSCore
import Foundation
import NIOCore
import NIOHTTP2
import NIOPosix

/// One HTTP/2 connection's APNs logic: reads `HTTP2Frame`s from an inline `NIOHTTP2Handler`,
/// collects each stream's HEADERS and DATA, answers with HEADERS (+DATA) on the same channel, and
/// flushes once per read batch. No child channel per stream. The rules live in
/// `ConnectionStateMachine` (per connection) and `EmulatorCore` (shared).
final class EmulatorConnectionHandler: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = HTTP2Frame
    typealias OutboundOut = HTTP2Frame

    private struct PendingStream {
        var head: HTTP2Frame.FramePayload.Headers
        var body: [UInt8] = []
        var bodySize = 0
        var unacknowledgedBytes = 0
    }

    private let core: EmulatorCore
    private let policy: RequestPolicy
    private let registry: ConnectionRegistry
    private let idleTimeout: Duration?
    /// The handler in front of TLS, so an abrupt reset skips the TLS close_notify.
    private let rawCloser: RawCloseHandler
    private var machine: ConnectionStateMachine
    private var context: ChannelHandlerContext?
    private var streams: [HTTP2StreamID: PendingStream] = [:]
    /// Streams the client opened that are not closed yet.
    private var openStreams: Set<HTTP2StreamID> = []
    /// Accepted streams whose answer is delayed or withheld.
    private var unanswered: Set<HTTP2StreamID> = []
    private var highestStreamID: HTTP2StreamID = .rootStream
    private var connectionBytesToAcknowledge = 0
    private var needsFlush = false
    private var isReading = false
    private var isClosing = false
    /// After our GOAWAY, streams above this are not processed (RFC 9113 §6.8).
    private var goAwayLastStreamID: HTTP2StreamID?
    private var lastActivity = NIODeadline.now()
    private var idleTask: Scheduled<Void>?
    private var registrationID: Int?
    private var ids = RequestIDGenerator()

    init(
        core: EmulatorCore,
        policy: RequestPolicy,
        registry: ConnectionRegistry,
        machine: ConnectionStateMachine,
        idleTimeout: Duration?,
        rawCloser: RawCloseHandler
    ) {
        self.core = core
        self.policy = policy
        self.registry = registry
        self.machine = machine
        self.idleTimeout = idleTimeout
        self.rawCloser = rawCloser
    }

    // MARK: Lifecycle

    func handlerAdded(context: ChannelHandlerContext) {
        self.context = context
        core.state.withLock { $0.counters.connectionsAccepted += 1 }
        let bound = NIOLoopBound(self, eventLoop: context.eventLoop)
        registrationID = registry.add(ConnectionHandle(channel: context.channel, handler: bound))
        // The live stream limit may differ from the configured one (setMaxConcurrentStreams).
        let live = core.state.withLock { $0.maxConcurrentStreams }
        if live != machine.configuredStreamLimit, let value = machine.changeConfiguredStreamLimit(live) {
            sendSettings(maxConcurrentStreams: value, context: context)
            context.flush()
        }
        scheduleIdleCheck(context: context)
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        if let id = registrationID { registry.remove(id) }
        idleTask?.cancel()
        self.context = nil
    }

    func channelInactive(context: ChannelHandlerContext) {
        if let id = registrationID { registry.remove(id) }
        registrationID = nil
        idleTask?.cancel()
        context.fireChannelInactive()
    }

    func errorCaught(context: ChannelHandlerContext, error: Error) {
        // Stream errors (a malformed header block, say) are answered by NIO with RST_STREAM;
        // anything else ends the connection.
        if error is NIOHTTP2Errors.StreamError { return }
        context.close(promise: nil)
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if let closed = event as? StreamClosedEvent {
            openStreams.remove(closed.streamID)
            streams.removeValue(forKey: closed.streamID)
            unanswered.remove(closed.streamID)
        }
        context.fireUserInboundEventTriggered(event)
    }

    // MARK: Reading

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        isReading = true
        let frame = unwrapInboundIn(data)
        lastActivity = .now()
        switch frame.payload {
        case .headers(let headers):
            receiveHeaders(headers, streamID: frame.streamID, context: context)
        case .data(let payload):
            receiveData(payload, streamID: frame.streamID, context: context)
        case .rstStream:
            streams.removeValue(forKey: frame.streamID)
            unanswered.remove(frame.streamID)
        case .ping(_, ack: false):
            // NIOHTTP2Handler answers it; counted so tests can see a client's keep-alive (apns.md C.1).
            core.state.withLock { $0.counters.pingsReceived += 1 }
        default:
            break  // SETTINGS and PING are answered by NIOHTTP2Handler; PRIORITY is ignored (apns.md C.4).
        }
    }

    func channelReadComplete(context: ChannelHandlerContext) {
        isReading = false
        if needsFlush {
            needsFlush = false
            context.flush()
        }
        context.fireChannelReadComplete()
    }

    private func receiveHeaders(
        _ headers: HTTP2Frame.FramePayload.Headers, streamID: HTTP2StreamID, context: ChannelHandlerContext
    ) {
        if var pending = streams[streamID] {
            // Trailers end the request.
            if headers.endStream {
                streams.removeValue(forKey: streamID)
                finish(streamID: streamID, pending: &pending, context: context)
            }
            return
        }
        guard !isClosing, !openStreams.contains(streamID) else { return }
        openStreams.insert(streamID)
        if streamID > highestStreamID { highestStreamID = streamID }
        // Over the advertised limit: REFUSED_STREAM (RFC 9113 §5.1.2, apns.md C.4).
        if openStreams.count > machine.advertisedStreamLimit {
            openStreams.remove(streamID)
            refuse(streamID, context: context)
            return
        }
        var pending = PendingStream(head: headers)
        if headers.endStream {
            finish(streamID: streamID, pending: &pending, context: context)
        } else {
            streams[streamID] = pending
        }
    }

    private func receiveData(
        _ payload: HTTP2Frame.FramePayload.Data, streamID: HTTP2StreamID, context: ChannelHandlerContext
    ) {
        let size = payload.data.readableBytes
        let flowControlled = size + (payload.paddingBytes.map { $0 + 1 } ?? 0)
        // NIO leaves the connection window to whoever consumes frames; give it back in chunks.
        connectionBytesToAcknowledge += flowControlled
        if connectionBytesToAcknowledge >= 16_384 {
            write(HTTP2Frame(streamID: .rootStream, payload: .windowUpdate(windowSizeIncrement: connectionBytesToAcknowledge)), context: context)
            connectionBytesToAcknowledge = 0
        }
        guard var pending = streams[streamID] else { return }
        pending.bodySize += size
        // Keep at most one byte more than the largest payload: enough to say PayloadTooLarge.
        if pending.body.count <= APNSPushType.voip.maximumPayloadSize, case .byteBuffer(let buffer) = payload.data {
            pending.body.append(contentsOf: buffer.readableBytesView.prefix(APNSPushType.voip.maximumPayloadSize + 1 - pending.body.count))
        }
        if payload.endStream {
            streams.removeValue(forKey: streamID)
            finish(streamID: streamID, pending: &pending, context: context)
        } else {
            pending.unacknowledgedBytes += flowControlled
            if pending.unacknowledgedBytes >= 16_384 {
                write(HTTP2Frame(streamID: streamID, payload: .windowUpdate(windowSizeIncrement: pending.unacknowledgedBytes)), context: context)
                pending.unacknowledgedBytes = 0
            }
            streams[streamID] = pending
        }
    }

    // MARK: Answering

    private func finish(streamID: HTTP2StreamID, pending: inout PendingStream, context: ChannelHandlerContext) {
        if let last = goAwayLastStreamID, streamID > last { return }
        let head = RequestHead(pending.head)
        let now = core.now()
        let (evaluation, settings) = machine.evaluate(
            head, body: pending.body, now: now, policy: policy, makeID: { self.ids.next(uppercase: true) }
        )
        if let settings { sendSettings(maxConcurrentStreams: settings, context: context) }
        let outcome = core.handle(evaluation, requestIndex: machine.requestsReceived, now: now)
        if outcome.wedge { machine.isWedged = true }

        switch outcome.action {
        case .resetConnection:
            resetConnection(context: context)
            return
        case .neverRespond:
            unanswered.insert(streamID)
            return
        case .respond(let status, let reason, let timestamp, let uniqueID):
            if let delay = outcome.delay {
                unanswered.insert(streamID)
                let goAway = outcome.goAwayAfter
                context.eventLoop.assumeIsolated().scheduleTask(in: TimeAmount(delay)) { [self] in
                    guard let context = self.context, self.unanswered.remove(streamID) != nil else { return }
                    self.respond(streamID: streamID, status: status, reason: reason, timestamp: timestamp,
                                 uniqueID: uniqueID, outcome: outcome, context: context)
                    if let goAway { self.goAway(reason: goAway, lastStreamID: streamID, context: context) }
                    context.flush()
                }
                return
            }
            respond(streamID: streamID, status: status, reason: reason, timestamp: timestamp,
                    uniqueID: uniqueID, outcome: outcome, context: context)
            if let goAway = outcome.goAwayAfter {
                self.goAway(reason: goAway, lastStreamID: streamID, context: context)
            }
            if !isReading { context.flush() }
        }
    }

    private func respond(
        streamID: HTTP2StreamID, status: Int, reason: APNSReason?, timestamp: Date?,
        uniqueID: Bool, outcome: Outcome, context: ChannelHandlerContext
    ) {
        let apnsID = outcome.apnsID
        if let limit = machine.responded(status: status, throttleOnReject: outcome.throttleOnReject) {
            sendSettings(maxConcurrentStreams: limit, context: context)
        }
        defer {
            if let reason, machine.countError(status: status, reason: reason, budget: outcome.errorBudget) {
                core.state.withLock { $0.counters.errorBudgetDisconnects += 1 }
                goAway(reason: reason, lastStreamID: streamID, context: context)
            }
        }
        guard let reason else {
            // Success: HEADERS only, with END_STREAM (apns.md A.5).
            var success = HTTP2Frame.FramePayload.Headers(headers: .init(), endStream: true)
            success.headers.reserveCapacity(3)
            success.headers.add(name: ":status", value: "200")
            // Ids are new on every answer: indexing them would only churn the HPACK table.
            success.headers.add(name: "apns-id", value: apnsID, indexing: .nonIndexable)
            if uniqueID {
                success.headers.add(name: "apns-unique-id", value: ids.next(uppercase: false), indexing: .nonIndexable)
            }
            write(HTTP2Frame(streamID: streamID, payload: .headers(success)), context: context)
            return
        }
        // Error: HEADERS(:status, content-type, apns-id) then DATA {"reason":...} (+ timestamp in ms for 410).
        var failure = HTTP2Frame.FramePayload.Headers(headers: .init(), endStream: false)
        failure.headers.reserveCapacity(3)
        failure.headers.add(name: ":status", value: String(status))
        failure.headers.add(name: "content-type", value: "application/json")
        failure.headers.add(name: "apns-id", value: apnsID, indexing: .nonIndexable)
        write(HTTP2Frame(streamID: streamID, payload: .headers(failure)), context: context)
        var json = #"{"reason":""# + reason.rawValue + "\""
        if let timestamp { json += #","timestamp":"# + String(Int64((timestamp.timeIntervalSince1970 * 1000).rounded(.down))) }
        json += "}"
        let buffer = context.channel.allocator.buffer(string: json)
        write(HTTP2Frame(streamID: streamID, payload: .data(.init(data: .byteBuffer(buffer), endStream: true))), context: context)
    }

    private func refuse(_ streamID: HTTP2StreamID, context: ChannelHandlerContext) {
        core.state.withLock { $0.counters.refusedStreams += 1 }
        streams.removeValue(forKey: streamID)
        unanswered.remove(streamID)
        write(HTTP2Frame(streamID: streamID, payload: .rstStream(.refusedStream)), context: context)
    }

    private func sendSettings(maxConcurrentStreams: Int, context: ChannelHandlerContext) {
        let setting = HTTP2Setting(parameter: .maxConcurrentStreams, value: maxConcurrentStreams)
        write(HTTP2Frame(streamID: .rootStream, payload: .settings(.settings([setting]))), context: context)
    }

    private func write(_ frame: HTTP2Frame, context: ChannelHandlerContext) {
        context.write(wrapOutboundOut(frame), promise: nil)
        needsFlush = true
    }

    // MARK: Connection-level actions (also driven by the emulator's API)

    /// GOAWAY with `{"reason":...}` debug data (apns.md A.5, C.4), then close.
    func goAway(reason: APNSReason, lastStreamID: HTTP2StreamID? = nil, context: ChannelHandlerContext) {
        guard !isClosing else { return }
        isClosing = true
        core.state.withLock { $0.counters.goAwaysSent += 1 }
        let debug = context.channel.allocator.buffer(string: #"{"reason":""# + reason.rawValue + #""}"#)
        let last = lastStreamID ?? highestStreamID
        goAwayLastStreamID = last
        write(HTTP2Frame(streamID: .rootStream, payload: .goAway(lastStreamID: last, errorCode: .noError, opaqueData: debug)), context: context)
        context.flush()
        needsFlush = false
        // Let the client finish and close first. Closing while its bytes are still unread makes
        // the kernel send RST, which can destroy the GOAWAY before the client has read it.
        context.eventLoop.assumeIsolated().scheduleTask(in: .seconds(1)) { [self] in
            self.context?.close(promise: nil)
        }
    }

    func goAwayNow(reason: APNSReason) {
        guard let context else { return }
        goAway(reason: reason, context: context)
    }

    /// Close the TCP connection without GOAWAY or TLS close_notify, with RST (SO_LINGER 0).
    func resetConnection() {
        guard let context else { return }
        resetConnection(context: context)
    }

    private func resetConnection(context: ChannelHandlerContext) {
        isClosing = true
        rawCloser.reset()
    }

    /// The operator changed MAX_CONCURRENT_STREAMS; optionally refuse accepted-but-unanswered
    /// streams above the new limit, newest first (apns.md C.2: "in-flight streams get REFUSED_STREAM").
    func changeStreamLimit(_ limit: Int, refuseExcessInFlight: Bool) {
        guard let context else { return }
        if let value = machine.changeConfiguredStreamLimit(limit) {
            sendSettings(maxConcurrentStreams: value, context: context)
        }
        if refuseExcessInFlight, openStreams.count > limit {
            let excess = openStreams.count - limit
            for id in unanswered.sorted(by: >).prefix(excess) {
                openStreams.remove(id)
                refuse(id, context: context)
            }
        }
        context.flush()
        needsFlush = false
    }

    /// Make this connection answer `ExpiredProviderToken` to everything from now on.
    func wedge() { machine.isWedged = true }

    // MARK: Idle timeout

    private func scheduleIdleCheck(context: ChannelHandlerContext) {
        guard let idleTimeout else { return }
        let timeout = TimeAmount(idleTimeout)
        let deadline = lastActivity + timeout
        idleTask = context.eventLoop.assumeIsolated().scheduleTask(deadline: deadline) { [self] in
            guard let context = self.context, !self.isClosing else { return }
            if NIODeadline.now() >= self.lastActivity + timeout, self.unanswered.isEmpty {
                self.goAway(reason: .idleTimeout, context: context)
            } else {
                self.scheduleIdleCheck(context: context)
            }
        }
    }
}

extension TimeAmount {
    init(_ duration: Duration) {
        let (seconds, attoseconds) = duration.components
        self = .nanoseconds(seconds * 1_000_000_000 + attoseconds / 1_000_000_000)
    }
}

/// Sits in front of TLS; closing from here sends a TCP RST and skips close_notify.
final class RawCloseHandler: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = NIOAny
    typealias OutboundIn = NIOAny
    private var context: ChannelHandlerContext?

    func handlerAdded(context: ChannelHandlerContext) { self.context = context }
    func handlerRemoved(context: ChannelHandlerContext) { self.context = nil }

    func reset() {
        guard let context else { return }
        if let provider = context.channel as? SocketOptionProvider {
            _ = provider.setSoLinger(linger(l_onoff: 1, l_linger: 0))
        }
        context.close(promise: nil)
    }
}

/// A live connection, for the emulator's API (shutdown, faults on live connections).
struct ConnectionHandle: Sendable {
    let channel: Channel
    let handler: NIOLoopBound<EmulatorConnectionHandler>

    func run(_ body: @escaping @Sendable (EmulatorConnectionHandler) -> Void) {
        let handler = self.handler
        channel.eventLoop.execute { body(handler.value) }
    }
}

final class ConnectionRegistry: Sendable {
    private let state = Locked<(next: Int, handles: [Int: ConnectionHandle])>((0, [:]))

    func add(_ handle: ConnectionHandle) -> Int {
        state.withLock { state in
            state.next += 1
            state.handles[state.next] = handle
            return state.next
        }
    }

    func remove(_ id: Int) { _ = state.withLock { $0.handles.removeValue(forKey: id) } }

    var all: [ConnectionHandle] { state.withLock { Array($0.handles.values) } }
}
