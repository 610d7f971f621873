import BeckonXMPP
import Logging
import NIOCore

/// The component's connection: bytes into `ComponentStateMachine`, its actions out. A publish is
/// answered by `onPublish` (the store and the planner, off the event loop), then written back.
final class XMPPComponentHandler: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    private var machine: ComponentStateMachine
    private let onPublish: @Sendable (PushPublish) async -> XMPPElement
    private let onReady: @Sendable () -> Void
    private let logger: Logger

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
        context.fireChannelActive()
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
            case .publish(let publish):
                let channel = context.channel
                let onPublish = self.onPublish
                Task {
                    let answer = await onPublish(publish)
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
