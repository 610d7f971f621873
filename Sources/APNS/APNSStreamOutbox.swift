import NIOConcurrencyHelpers
import NIOCore

/// Hands requests to one connection's event loop in batches.
///
/// Callers run on many threads; writing each request with `writeAndFlush` would cost one event
/// loop task and one TLS record and `write(2)` per notification. Here the first request of a batch
/// schedules one task, later ones join it, and the batch is flushed once.
final class APNSStreamOutbox: Sendable {
    let channel: any Channel
    private let batch = NIOLockedValueBox<(requests: [APNSStreamRequest], scheduled: Bool)>(([], false))

    init(channel: any Channel) {
        self.channel = channel
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
        let requests = batch.withLockedValue { batch in
            defer {
                batch.requests.removeAll(keepingCapacity: true)
                batch.scheduled = false
            }
            return batch.requests
        }
        for request in requests {
            // A write that fails never reached our handler (the channel closed meanwhile), so
            // APNs never saw it: fail it as "send elsewhere", or its caller would wait forever.
            let written = channel.eventLoop.makePromise(of: Void.self)
            written.futureResult.whenFailure { _ in request.promise.fail(APNSConnectionError.goingAway) }
            channel.write(request, promise: written)
        }
        channel.flush()
    }
}
