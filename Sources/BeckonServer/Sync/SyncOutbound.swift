import BeckonProtocol
import NIOCore
import NIOWebSocket

/// What a session writes to its device: text frames and the close frame, through the channel's
/// pipeline (so `SyncChannelHandler` sees the close go out and runs the handshake).
///
/// Writes are not awaited: frames from one session are written in order, the window bounds how
/// many messages can be outstanding, and a connection that fails ends the session through
/// `SyncChannelHandler.channelInactive` (`dropped`) rather than through a failed write.
struct SyncOutbound: Sendable {
    let channel: any Channel

    /// Queues a frame; `flush()` sends what is queued.
    func write(_ text: String) {
        let frame = WebSocketFrame(fin: true, opcode: .text, data: channel.allocator.buffer(string: text))
        channel.write(frame, promise: nil)
    }

    func flush() {
        channel.flush()
    }

    /// Sends the close frame (after anything queued); the handler then waits for the device's
    /// answer, at most `SyncLimits.closeTimeout`.
    func close(_ code: SyncCloseCode, reason: String) {
        var data = channel.allocator.buffer(capacity: 2 + reason.utf8.count)
        data.write(webSocketErrorCode: WebSocketErrorCode(codeNumber: Int(code.rawValue)))
        // A control frame carries at most 125 bytes (RFC 6455 §5.5).
        data.writeString(String(decoding: reason.utf8.prefix(123), as: UTF8.self))
        channel.writeAndFlush(WebSocketFrame(fin: true, opcode: .connectionClose, data: data), promise: nil)
    }
}
