import Foundation
import NIOCore
import NIOPosix

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
