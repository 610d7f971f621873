import APNSCore
import Foundation
import NIOCore
import NIOHTTP2

/// One HTTP/2 connection's APNs logic: reads `HTTP2Frame`s from an inline `NIOHTTP2Handler`,
/// answers with HEADERS (+DATA) on the same channel, and flushes once per read batch. No child
/// channel per stream.
///
/// Every decision is `ConnectionStateMachine`'s (per connection) or `EmulatorCore`'s (shared):
/// this class decodes frames, calls them, and performs what they answer.
final class EmulatorConnectionHandler: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = HTTP2Frame
    typealias OutboundOut = HTTP2Frame

    private let core: EmulatorCore
    private let policy: RequestPolicy
    private let registry: ConnectionRegistry
    /// The handler in front of TLS, so an abrupt reset skips the TLS close_notify.
    private let rawCloser: RawCloseHandler
    private var machine: ConnectionStateMachine
    private var context: ChannelHandlerContext?
    private var idleTask: Scheduled<Void>?
    private var registrationID: Int?

    init(
        core: EmulatorCore,
        policy: RequestPolicy,
        registry: ConnectionRegistry,
        rules: ConnectionRules,
        idleTimeout: Duration?,
        rawCloser: RawCloseHandler
    ) {
        self.core = core
        self.policy = policy
        self.registry = registry
        self.machine = ConnectionStateMachine(rules: rules, idleTimeout: idleTimeout.map(TimeAmount.init), now: .now())
        self.rawCloser = rawCloser
    }

    // MARK: Lifecycle

    func handlerAdded(context: ChannelHandlerContext) {
        self.context = context
        core.state.withLockedValue { $0.counters.connectionsAccepted += 1 }
        let bound = NIOLoopBound(self, eventLoop: context.eventLoop)
        registrationID = registry.add(ConnectionHandle(channel: context.channel, handler: bound))
        // The live stream limit may differ from the configured one (setMaxConcurrentStreams).
        let live = core.state.withLockedValue { $0.maxConcurrentStreams }
        perform(machine.streamLimitChanged(live, refuseExcessInFlight: false), context: context)
        if let deadline = machine.idleDeadline { scheduleIdleCheck(at: deadline, context: context) }
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
        machine.channelInactive()
        context.fireChannelInactive()
    }

    func errorCaught(context: ChannelHandlerContext, error: Error) {
        // Stream errors (a malformed header block, say) are answered by NIO with RST_STREAM;
        // anything else ends the connection: with the answers this read batch wrote, which
        // would otherwise be discarded unsent although their requests were processed.
        if error is NIOHTTP2Errors.StreamError { return }
        context.flush()
        context.close(promise: nil)
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if let closed = event as? StreamClosedEvent { machine.streamClosed(closed.streamID) }
        context.fireUserInboundEventTriggered(event)
    }

    // MARK: Reading

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let frame = unwrapInboundIn(data)
        switch frame.payload {
        case .headers(let headers):
            perform(machine.headersReceived(headers, on: frame.streamID), context: context)
        case .data(let payload):
            if case .sendWindowUpdate(let increment) = machine.connectionWindowConsumed(payload.flowControlledLength) {
                context.write(wrapOutboundOut(HTTP2Frame(streamID: .rootStream, payload: .windowUpdate(windowSizeIncrement: increment))), promise: nil)
            }
            perform(machine.dataReceived(payload, on: frame.streamID), context: context)
        case .rstStream:
            machine.resetReceived(on: frame.streamID)
        case .ping(_, ack: false):
            // NIOHTTP2Handler answers it; counted so tests can see a client's keep-alive (apns.md C.1).
            core.state.withLockedValue { $0.counters.pingsReceived += 1 }
        default:
            break  // SETTINGS and PING are answered by NIOHTTP2Handler; PRIORITY is ignored (apns.md C.4).
        }
    }

    func channelReadComplete(context: ChannelHandlerContext) {
        if machine.readComplete(now: .now()) == .flush { context.flush() }
        closeIfDrained(context: context)
        context.fireChannelReadComplete()
    }

    private func perform(_ action: ConnectionStateMachine.StreamAction, context: ChannelHandlerContext) {
        switch action {
        case .none:
            break
        case .refuse(let id):
            core.state.withLockedValue { $0.counters.refusedStreams += 1 }
            context.write(wrapOutboundOut(HTTP2Frame(streamID: id, payload: .rstStream(.refusedStream))), promise: nil)
        case .sendWindowUpdate(let id, let increment):
            context.write(wrapOutboundOut(HTTP2Frame(streamID: id, payload: .windowUpdate(windowSizeIncrement: increment))), promise: nil)
        case .decide(let request):
            let now = core.now()
            let check = machine.evaluate(request, now: now, policy: policy)
            if let settings = check.settings { writeSettings(maxConcurrentStreams: settings, context: context) }
            let outcome = core.handle(check.evaluation, requestIndex: check.requestIndex, now: now)
            perform(machine.decided(outcome, for: request.streamID), context: context)
        }
    }

    // MARK: Answering

    private func perform(_ action: ConnectionStateMachine.AnswerAction, context: ChannelHandlerContext) {
        switch action {
        case .none:
            break
        case .respond(let answer):
            respond(answer, context: context)
            // Outside a read batch (a delayed answer), nobody else looks.
            if answer.flush { closeIfDrained(context: context) }
        case .respondLater(let id, let delay, let outcome):
            context.eventLoop.assumeIsolated().scheduleTask(in: TimeAmount(delay)) { [self] in
                guard let context = self.context else { return }
                self.perform(self.machine.answerDue(id, outcome), context: context)
                self.closeIfDrained(context: context)
            }
        case .resetConnection:
            rawCloser.reset()
        }
    }

    private func respond(_ answer: ConnectionStateMachine.Answer, context: ChannelHandlerContext) {
        if let settings = answer.settings { writeSettings(maxConcurrentStreams: settings, context: context) }
        if let reason = answer.reason {
            // Error: HEADERS(:status, content-type, apns-id) then DATA {"reason":...} (+ timestamp in ms for 410).
            var failure = HTTP2Frame.FramePayload.Headers(headers: .init(), endStream: false)
            failure.headers.reserveCapacity(3)
            failure.headers.add(name: ":status", value: String(answer.status))
            failure.headers.add(name: "content-type", value: "application/json")
            failure.headers.add(name: "apns-id", value: answer.apnsID, indexing: .nonIndexable)
            context.write(wrapOutboundOut(HTTP2Frame(streamID: answer.streamID, payload: .headers(failure))), promise: nil)
            var json = #"{"reason":""# + reason.rawValue + "\""
            if let timestamp = answer.timestamp {
                json += #","timestamp":"# + String(Int64((timestamp.timeIntervalSince1970 * 1000).rounded(.down)))
            }
            json += "}"
            let buffer = context.channel.allocator.buffer(string: json)
            context.write(
                wrapOutboundOut(HTTP2Frame(streamID: answer.streamID, payload: .data(.init(data: .byteBuffer(buffer), endStream: true)))),
                promise: nil
            )
        } else {
            // Success: HEADERS only, with END_STREAM (apns.md A.5).
            var success = HTTP2Frame.FramePayload.Headers(headers: .init(), endStream: true)
            success.headers.reserveCapacity(3)
            success.headers.add(name: ":status", value: "200")
            // Ids are new on every answer: indexing them would only churn the HPACK table.
            success.headers.add(name: "apns-id", value: answer.apnsID, indexing: .nonIndexable)
            if let uniqueID = answer.uniqueID {
                success.headers.add(name: "apns-unique-id", value: uniqueID, indexing: .nonIndexable)
            }
            context.write(wrapOutboundOut(HTTP2Frame(streamID: answer.streamID, payload: .headers(success))), promise: nil)
        }
        if let goAway = answer.goAway { write(goAway, context: context) }
        if answer.flush { context.flush() }
    }

    private func writeSettings(maxConcurrentStreams: Int, context: ChannelHandlerContext) {
        let setting = HTTP2Setting(parameter: .maxConcurrentStreams, value: maxConcurrentStreams)
        context.write(wrapOutboundOut(HTTP2Frame(streamID: .rootStream, payload: .settings(.settings([setting])))), promise: nil)
    }

    /// GOAWAY with `{"reason":...}` debug data (apns.md A.5, C.4), then close once nothing is owed.
    /// The caller flushes.
    private func write(_ goAway: ConnectionStateMachine.GoAway, context: ChannelHandlerContext) {
        core.state.withLockedValue { state in
            state.counters.goAwaysSent += 1
            if goAway.errorBudgetSpent { state.counters.errorBudgetDisconnects += 1 }
        }
        // Below NIO's HTTP/2 handler, which must not quiesce (GoAwayFrame says why).
        let frame = GoAwayFrame.encode(goAway, allocator: context.channel.allocator)
        if let http2 = try? context.pipeline.syncOperations.context(handlerType: NIOHTTP2Handler.self) {
            http2.writeAndFlush(NIOAny(frame), promise: nil)  // NIO flushes only what it wrote itself.
        }
        // Closed once every answer it owes is out (`closeIfDrained`), or after this long at most:
        // a client that never sends the rest of a request it opened cannot hold it for ever.
        context.eventLoop.assumeIsolated().scheduleTask(in: Self.drainLimit) { [self] in
            guard let context = self.context else { return }
            context.flush()
            context.close(promise: nil)
        }
    }

    /// How long a connection that sent GOAWAY may wait for the requests it still owes answers to.
    static let drainLimit = TimeAmount.seconds(30)

    /// After GOAWAY, once no answer is owed on the streams it covers: close (apns.md G.19).
    private func closeIfDrained(context: ChannelHandlerContext) {
        guard machine.drainCheck() == .close else { return }
        // Let the client finish and close first. Closing while its bytes are still unread makes
        // the kernel send RST, which can destroy answers (and the GOAWAY) it has yet to read.
        context.eventLoop.assumeIsolated().scheduleTask(in: .seconds(1)) { [self] in
            guard let context = self.context else { return }
            context.flush()
            context.close(promise: nil)
        }
    }

    // MARK: Connection-level actions (driven by the emulator's API)

    func goAwayNow(reason: APNSReason) {
        guard let context, case .goAway(let goAway) = machine.goAwayRequested(reason: reason) else { return }
        write(goAway, context: context)
        context.flush()
        closeIfDrained(context: context)
    }

    /// Close the TCP connection without GOAWAY or TLS close_notify, with RST (SO_LINGER 0).
    func resetConnection() {
        guard context != nil else { return }
        machine.resetRequested()
        rawCloser.reset()
    }

    func changeStreamLimit(_ limit: Int, refuseExcessInFlight: Bool) {
        guard let context else { return }
        perform(machine.streamLimitChanged(limit, refuseExcessInFlight: refuseExcessInFlight), context: context)
    }

    private func perform(_ change: ConnectionStateMachine.StreamLimitChange, context: ChannelHandlerContext) {
        guard change.settings != nil || !change.refused.isEmpty else { return }
        if let settings = change.settings { writeSettings(maxConcurrentStreams: settings, context: context) }
        if !change.refused.isEmpty {
            core.state.withLockedValue { $0.counters.refusedStreams += change.refused.count }
            for id in change.refused {
                context.write(wrapOutboundOut(HTTP2Frame(streamID: id, payload: .rstStream(.refusedStream))), promise: nil)
            }
        }
        context.flush()
    }

    /// Make this connection answer `ExpiredProviderToken` to everything from now on.
    func wedge() { machine.wedge() }

    // MARK: Idle timeout

    private func scheduleIdleCheck(at deadline: NIODeadline, context: ChannelHandlerContext) {
        idleTask = context.eventLoop.assumeIsolated().scheduleTask(deadline: deadline) { [self] in
            guard let context = self.context else { return }
            switch self.machine.idleTimerFired(now: .now()) {
            case .stop:
                break
            case .goAway(let goAway):
                self.write(goAway, context: context)
                context.flush()
                self.closeIfDrained(context: context)
            case .checkAgain(let next):
                self.scheduleIdleCheck(at: next, context: context)
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
