import NIOConcurrencyHelpers
import NIOCore

/// Hands requests to one connection's event loop in batches.
///
/// Callers run on many threads; writing each request with `writeAndFlush` would cost one event
/// loop task and one TLS record and `write(2)` per notification. Here the first request of a batch
/// schedules one task, later ones join it, and the batch is written and flushed at once.
final class APNSStreamOutbox: Sendable {
    let channel: any Channel
    private let handler: NIOLoopBound<APNSConnectionHandler>
    private let batch = NIOLockedValueBox<(requests: [APNSStreamRequest], scheduled: Bool)>(([], false))

    /// Call on the channel's event loop (the channel initializer).
    init(channel: any Channel, handler: APNSConnectionHandler) {
        self.channel = channel
        self.handler = NIOLoopBound(handler, eventLoop: channel.eventLoop)
    }

    func enqueue(_ request: APNSStreamRequest) {
        let mustSchedule = batch.withLockedValue { batch in
            batch.requests.append(request)
            defer { batch.scheduled = true }
            return !batch.scheduled
        }
        if mustSchedule { channel.eventLoop.execute { self.drain() } }
    }

    private func drain() {
        // The handler opens the streams itself: if it has left the pipeline (the channel closed
        // meanwhile), it fails them as "send elsewhere", since APNs never saw them.
        let handler = self.handler.value
        var requests = handler.spareBatch
        handler.spareBatch = []
        batch.withLockedValue { batch in
            swap(&batch.requests, &requests)
            batch.scheduled = false
        }
        handler.send(requests)
        // Both arrays keep their capacity, so steady-state batches allocate nothing.
        requests.removeAll(keepingCapacity: true)
        handler.spareBatch = requests
    }
}
