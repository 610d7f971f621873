import BeckonProtocol
import NIOCore
import NIOWebSocket

/// The WebSocket side of one sync session, on the connection's event loop: it joins fragments
/// into messages (at most `SyncLimits.maximumFrameBytes`, beyond which 1009), hands text
/// messages to the session's inbox, answers pings, pings the device and closes the connection
/// when a pong does not come back within the next interval, and runs the close handshake.
///
/// Event-driven rather than a task reading an async stream: an idle connection then costs a
/// handler in its pipeline and one scheduled ping, not a suspended task whose async frames stay
/// allocated for as long as the connection lives.
///
/// The session's frames and its close frame come from `SyncOutbound` through the pipeline, so
/// this handler sees them go out: after the close frame nothing more is written, and the
/// connection is closed when the device answers it or `closeTimeout` later.
final class SyncChannelHandler: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = WebSocketFrame
    typealias OutboundIn = WebSocketFrame
    typealias OutboundOut = WebSocketFrame

    private enum State {
        case open
        /// Our close frame is out; waiting for the device's.
        case closeSent
        case closed
    }

    private let session: SyncSessionHandle
    private let maximumMessageBytes: Int
    private let maximumQueuedFrames: Int
    private let pingInterval: TimeAmount?
    private let closeTimeout: TimeAmount
    private var state = State.open
    /// The first frames of a fragmented message.
    private var partialOpcode: WebSocketOpcode?
    private var partialData = ByteBuffer()
    private var awaitingPong = false
    private var toldSession = false
    /// For the timers; set while the handler is in the pipeline.
    private var context: ChannelHandlerContext?

    init(session: SyncSessionHandle, limits: SyncLimits) {
        self.session = session
        self.maximumMessageBytes = limits.maximumFrameBytes
        self.maximumQueuedFrames = limits.maximumQueuedFrames
        self.pingInterval = limits.pingInterval.map { TimeAmount($0) }
        self.closeTimeout = TimeAmount(limits.closeTimeout)
    }

    func handlerAdded(context: ChannelHandlerContext) {
        self.context = context
        schedulePing(context: context)
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        self.context = nil
    }

    // MARK: Inbound

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let frame = unwrapInboundIn(data)
        switch frame.opcode {
        case .connectionClose:
            receivedClose(context: context, frame)
        case .ping:
            guard frame.fin else { return fail(context: context, .protocolError) }
            guard case .open = state else { return }
            context.writeAndFlush(wrapOutboundOut(WebSocketFrame(fin: true, opcode: .pong, data: frame.unmaskedData)), promise: nil)
        case .pong:
            awaitingPong = false
        case .text, .binary, .continuation:
            // Data after our close frame is dropped: the session has ended.
            guard case .open = state else { return }
            receivedData(context: context, frame)
        default:
            fail(context: context, .protocolError)
        }
    }

    private func receivedData(context: ChannelHandlerContext, _ frame: WebSocketFrame) {
        var opcode = frame.opcode
        var data = frame.unmaskedData
        if opcode == .continuation {
            guard let first = partialOpcode else { return fail(context: context, .protocolError) }
            guard partialData.readableBytes + data.readableBytes <= maximumMessageBytes else {
                return fail(context: context, .messageTooLarge)
            }
            partialData.writeBuffer(&data)
            data = partialData
            opcode = first
        } else if partialOpcode != nil {
            return fail(context: context, .protocolError)
        }
        guard data.readableBytes <= maximumMessageBytes else { return fail(context: context, .messageTooLarge) }
        guard frame.fin else {
            partialOpcode = opcode
            partialData = data
            return
        }
        partialOpcode = nil
        partialData = ByteBuffer()  // An idle session keeps no buffer.
        if opcode == .text {
            if !session.frameArrived(String(buffer: data), limit: maximumQueuedFrames) {
                session.close(.tooMany, reason: "too many frames", end: .overloaded)
            }
        } else {
            session.invalidFrame(SyncFrameError(.malformedFrame, "frames are JSON in text messages"))
        }
    }

    private func receivedClose(context: ChannelHandlerContext, _ frame: WebSocketFrame) {
        switch state {
        case .open:
            // The device closes first: answer with its code (RFC 6455 §5.5.1), then hang up. The
            // session sees the connection end: `dropped`, unless it said `bye` before.
            let payload = frame.unmaskedData
            let code = payload.readableBytes >= 2 ? payload.getInteger(at: payload.readerIndex, as: UInt16.self) : nil
            state = .closed
            var data = context.channel.allocator.buffer(capacity: 2)
            if let code, Self.mayBeSent(code) {
                data.writeInteger(code)
            } else if code != nil || payload.readableBytes == 1 {
                // A code no endpoint may send, or a one-byte body: RFC 6455 §7.4.1, §5.5.1.
                data.write(webSocketErrorCode: .protocolError)
            }
            let answer = WebSocketFrame(fin: true, opcode: .connectionClose, data: data)
            let loopBound = context.loopBound
            context.writeAndFlush(wrapOutboundOut(answer)).assumeIsolated().whenComplete { _ in
                loopBound.value.close(promise: nil)
            }
        case .closeSent:
            state = .closed
            context.close(promise: nil)
        case .closed:
            break
        }
    }

    /// Close codes an endpoint may put in a close frame (RFC 6455 §7.4.1–7.4.2; 1004–1006 and
    /// 1015 are reserved for reporting, 3000–4999 for libraries and applications).
    static func mayBeSent(_ code: UInt16) -> Bool {
        (1000...1003).contains(code) || (1007...1014).contains(code) || (3000...4999).contains(code)
    }

    /// A WebSocket-level violation: close with `code` and wait (at most `closeTimeout`) for the
    /// device's answer.
    private func fail(context: ChannelHandlerContext, _ code: WebSocketErrorCode) {
        guard case .open = state else { return }
        partialOpcode = nil
        partialData = ByteBuffer()
        var data = context.channel.allocator.buffer(capacity: 2)
        data.write(webSocketErrorCode: code)
        startClosing(context: context)
        context.writeAndFlush(wrapOutboundOut(WebSocketFrame(fin: true, opcode: .connectionClose, data: data)), promise: nil)
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        switch event {
        case ChannelEvent.inputClosed:
            // The device half-closed: nothing more can come, so the connection is over.
            context.close(promise: nil)
        case is ChannelShouldQuiesceEvent:
            // The listener drains after the hub closed the sessions; one still open goes now.
            if case .open = state { session.close(.goingAway, reason: "server shutting down", end: .shutdown) }
        default:
            context.fireUserInboundEventTriggered(event)
        }
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        // A frame the decoder refused: one close frame with its code, then hang up (the decoder
        // reads nothing more, so no answer would come). This handler sends it, not NIO's
        // automatic error handling, which writes a second close frame after one of ours (RFC 6455
        // §5.5.1: one close frame each way).
        if let error = error as? NIOWebSocketError, case .open = state {
            state = .closed
            var data = context.channel.allocator.buffer(capacity: 2)
            data.write(webSocketErrorCode: error == .invalidFrameLength ? .messageTooLarge : .protocolError)
            let loopBound = context.loopBound
            context.writeAndFlush(wrapOutboundOut(WebSocketFrame(fin: true, opcode: .connectionClose, data: data)))
                .assumeIsolated().whenComplete { _ in loopBound.value.close(promise: nil) }
            return
        }
        // A reset, or a decoding error after our close frame: the connection is over either way.
        context.close(promise: nil)
    }

    func channelInactive(context: ChannelHandlerContext) {
        state = .closed
        if !toldSession {
            toldSession = true
            session.inboundEnded()
        }
        context.fireChannelInactive()
    }

    // MARK: Outbound (the session's frames, from SyncOutbound)

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        guard case .open = state else {
            promise?.fail(ChannelError.outputClosed)
            return
        }
        if unwrapOutboundIn(data).opcode == .connectionClose { startClosing(context: context) }
        context.write(data, promise: promise)
    }

    private func startClosing(context: ChannelHandlerContext) {
        state = .closeSent
        schedule(context: context, in: closeTimeout, CloseTimeout(handler: self))
    }

    // MARK: Timers

    /// Timers hold the handler weakly and are never cancelled: cancelling is a linear search of
    /// the event loop's timers (one per session), and a timer that fires after the connection
    /// closed finds the handler gone.
    private func schedule(context: ChannelHandlerContext, in delay: TimeAmount, _ callback: some NIOScheduledCallbackHandler) {
        _ = try? context.eventLoop.assumeIsolated().scheduleCallback(in: delay, handler: callback)
    }

    private func schedulePing(context: ChannelHandlerContext) {
        guard let pingInterval else { return }
        schedule(context: context, in: pingInterval, PingTick(handler: self))
    }

    fileprivate func pingTick() {
        guard let context, case .open = state else { return }
        guard !awaitingPong else {
            // The device stopped answering: a drop, whatever its socket says.
            var data = context.channel.allocator.buffer(capacity: 2 + 12)
            data.write(webSocketErrorCode: .goingAway)
            data.writeString("ping timeout")
            state = .closed
            let loopBound = context.loopBound
            context.writeAndFlush(wrapOutboundOut(WebSocketFrame(fin: true, opcode: .connectionClose, data: data)))
                .assumeIsolated().whenComplete { _ in loopBound.value.close(promise: nil) }
            return
        }
        awaitingPong = true
        context.writeAndFlush(wrapOutboundOut(WebSocketFrame(fin: true, opcode: .ping, data: ByteBuffer())), promise: nil)
        schedulePing(context: context)
    }

    fileprivate func closeTimedOut() {
        guard let context, case .closeSent = state else { return }
        state = .closed
        context.close(promise: nil)
    }
}

private struct PingTick: NIOScheduledCallbackHandler {
    weak var handler: SyncChannelHandler?

    func handleScheduledCallback(eventLoop: some EventLoop) {
        handler?.pingTick()
    }
}

private struct CloseTimeout: NIOScheduledCallbackHandler {
    weak var handler: SyncChannelHandler?

    func handleScheduledCallback(eventLoop: some EventLoop) {
        handler?.closeTimedOut()
    }
}
