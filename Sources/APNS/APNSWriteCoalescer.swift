import NIOCore

/// Joins the HTTP/2 handler's writes into one buffer per flush (up to a TLS record's worth),
/// between `NIOHTTP2Handler` and the TLS handler.
///
/// `NIOHTTP2Handler` writes every frame separately (a DATA frame is two writes: its header and its
/// payload), and the TLS handler seals each write as its own record: three records per
/// notification, each with its own encryption setup, 29 bytes of overhead, and a decryption on
/// the server. Joined, a batch of notifications costs one record per 16 KB.
final class APNSWriteCoalescer: ChannelOutboundHandler, RemovableChannelHandler {
    typealias OutboundIn = IOData
    typealias OutboundOut = ByteBuffer

    /// The most plaintext one TLS record carries (RFC 8446 §5.1).
    static let recordSize = 16_384

    private var pending: ByteBuffer?
    private var promises: [EventLoopPromise<Void>] = []
    /// The size of the last joined write, to size the next buffer without regrowing it.
    private var lastSize = 1_024

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        guard case .byteBuffer(var buffer) = unwrapOutboundIn(data) else {
            // File regions never come from HTTP/2 here; pass them on in order all the same.
            writePending(context: context)
            context.write(data, promise: promise)
            return
        }
        if let pending, pending.readableBytes + buffer.readableBytes > Self.recordSize {
            writePending(context: context)
        }
        if pending == nil, buffer.readableBytes >= Self.recordSize {
            context.write(wrapOutboundOut(buffer), promise: promise)
            return
        }
        if pending == nil {
            pending = context.channel.allocator.buffer(capacity: min(max(lastSize, buffer.readableBytes), Self.recordSize))
        }
        pending!.writeBuffer(&buffer)
        if let promise { promises.append(promise) }
    }

    func flush(context: ChannelHandlerContext) {
        writePending(context: context)
        context.flush()
    }

    func close(context: ChannelHandlerContext, mode: CloseMode, promise: EventLoopPromise<Void>?) {
        // Hand unflushed writes on unflushed, as they would have been without this handler.
        writePending(context: context)
        context.close(mode: mode, promise: promise)
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        discardPending()
    }

    private func writePending(context: ChannelHandlerContext) {
        guard let buffer = pending else { return }
        pending = nil
        lastSize = buffer.readableBytes
        let promise: EventLoopPromise<Void>?
        switch promises.count {
        case 0:
            promise = nil
        case 1:
            promise = promises[0]
        default:
            let joined = context.eventLoop.makePromise(of: Void.self)
            for waiting in promises { joined.futureResult.cascade(to: waiting) }
            promise = joined
        }
        promises.removeAll(keepingCapacity: true)
        context.write(wrapOutboundOut(buffer), promise: promise)
    }

    /// Removed with the channel: what was never handed on fails, as unflushed writes do.
    private func discardPending() {
        pending = nil
        let waiting = promises
        promises.removeAll()
        for promise in waiting { promise.fail(ChannelError.ioOnClosedChannel) }
    }
}
