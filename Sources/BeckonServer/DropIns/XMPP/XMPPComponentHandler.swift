import BeckonXMPP
import Logging
import NIOConcurrencyHelpers
import NIOCore

/// The component's connection: bytes into `ComponentStateMachine`, its actions out. A publish is
/// answered by `onPublish` (the store and the planner, off the event loop), then written back.
final class XMPPComponentHandler: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    /// How long the server has to accept the handshake, and how often it is pinged once ready.
    static let handshakeTimeout: TimeAmount = .seconds(10)
    static let pingInterval: TimeAmount = .seconds(60)
    /// Publishes being answered at once; beyond it the server is told to wait (its `wait`
    /// errors do not count against the registration), so a flood cannot grow tasks without bound.
    static let maximumInFlight = 256

    private var machine: ComponentStateMachine
    private let onPublish: @Sendable (PushPublish) async -> XMPPElement
    private let onReady: @Sendable () -> Void
    private let logger: Logger
    private let inFlight = NIOLockedValueBox(0)
    private var timers: [Scheduled<Void>] = []
    private var pings: RepeatedTask?

    init(
        machine: ComponentStateMachine, logger: Logger, onReady: @escaping @Sendable () -> Void,
        onPublish: @escaping @Sendable (PushPublish) async -> XMPPElement
    ) {
        self.machine = machine
        self.logger = logger
        self.onReady = onReady
        self.onPublish = onPublish
    }

    func channelActive(context: ChannelHandlerContext) {
        perform(machine.connected(), context: context)
        let loopBound = NIOLoopBound((self, context), eventLoop: context.eventLoop)
        timers.append(context.eventLoop.scheduleTask(in: Self.handshakeTimeout) {
            let (handler, context) = loopBound.value
            guard handler.machine.state != .ready else { return }
            handler.logger.warning("the XMPP server did not accept the component's handshake in time")
            context.close(promise: nil)
        })
        context.fireChannelActive()
    }

    func channelInactive(context: ChannelHandlerContext) {
        for timer in timers { timer.cancel() }
        pings?.cancel()
        context.fireChannelInactive()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let buffer = unwrapInboundIn(data)
        perform(machine.received(buffer.readableBytesView), context: context)
    }

    private func perform(_ actions: [ComponentStateMachine.Action], context: ChannelHandlerContext) {
        for action in actions {
            switch action {
            case .send(let text):
                context.writeAndFlush(wrapOutboundOut(context.channel.allocator.buffer(string: text)), promise: nil)
            case .ready:
                logger.info("connected to the XMPP server as a component", metadata: ["jid": "\(machine.jid)"])
                onReady()
                let loopBound = NIOLoopBound((self, context), eventLoop: context.eventLoop)
                pings = context.eventLoop.scheduleRepeatedTask(initialDelay: Self.pingInterval, delay: Self.pingInterval) { _ in
                    let (handler, context) = loopBound.value
                    handler.perform(handler.machine.pingDue(), context: context)
                }
            case .publish(let publish):
                let channel = context.channel
                let onPublish = self.onPublish, inFlight = self.inFlight, jid = machine.jid
                let admitted = inFlight.withLockedValue { count in
                    guard count < Self.maximumInFlight else { return false }
                    count += 1
                    return true
                }
                guard admitted else {
                    let busy = publish.error(from: jid, type: "wait", condition: "resource-constraint")
                    context.writeAndFlush(wrapOutboundOut(context.channel.allocator.buffer(
                        string: busy.xml(inherited: ComponentStateMachine.componentNamespace))), promise: nil)
                    continue
                }
                Task {
                    let answer = await onPublish(publish)
                    inFlight.withLockedValue { $0 -= 1 }
                    let text = answer.xml(inherited: ComponentStateMachine.componentNamespace)
                    channel.writeAndFlush(channel.allocator.buffer(string: text), promise: nil)
                }
            case .fail(let reason):
                logger.warning("the XMPP component stream ended", metadata: ["reason": "\(reason)"])
                context.close(promise: nil)
            }
        }
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        logger.warning("the XMPP component connection failed", metadata: ["error": "\(error)"])
        context.close(promise: nil)
    }
}
