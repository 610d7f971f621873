import HummingbirdCore
import Logging
import Metrics
import NIOConcurrencyHelpers
import NIOCore

/// The listener's child channel, held to `http.max-connections` open connections.
///
/// Every connection costs a file descriptor. At the process's limit accept(2) fails with
/// EMFILE: new clients then wait unanswered in the kernel's backlog, and SQLite can no longer
/// open its files. Closing connections beyond a limit set below the descriptor limit keeps a
/// reserve for the database and tells clients at once, so they back off and retry.
struct ConnectionLimitedChannel<Base: ServerChildChannel>: ServerChildChannel {
    typealias Value = Base.Value

    let base: Base
    let limiter: ConnectionLimiter

    func setup(channel: any Channel, logger: Logger) -> EventLoopFuture<Value> {
        guard limiter.admit() else {
            logger.debug("connection refused: http.max-connections reached", metadata: ["limit": "\(limiter.limit)"])
            channel.close(promise: nil)
            return channel.eventLoop.makeFailedFuture(ConnectionLimitReached(limit: limiter.limit))
        }
        // The close future fires once whatever ends the connection, so the count cannot leak.
        channel.closeFuture.whenComplete { _ in limiter.release() }
        return base.setup(channel: channel, logger: logger)
    }

    func handle(value: Value, logger: Logger) async {
        await base.handle(value: value, logger: logger)
    }
}

/// Counts the listener's open connections against `http.max-connections` and exports
/// `beckon_http_connections` (open now) and `beckon_http_connections_refused_total`.
final class ConnectionLimiter: Sendable {
    let limit: Int
    private let open = NIOLockedValueBox(0)
    private let openGauge = Gauge(label: "beckon_http_connections")
    private let refused = Counter(label: "beckon_http_connections_refused_total")

    init(limit: Int) {
        self.limit = limit
    }

    var openConnections: Int { open.withLockedValue { $0 } }

    /// Counts a new connection in, or returns false when the limit is reached.
    func admit() -> Bool {
        let count: Int? = open.withLockedValue { open in
            guard open < limit else { return nil }
            open += 1
            return open
        }
        guard let count else {
            refused.increment()
            return false
        }
        openGauge.record(count)
        return true
    }

    func release() {
        openGauge.record(open.withLockedValue { open in
            open -= 1
            return open
        })
    }
}

struct ConnectionLimitReached: Error, CustomStringConvertible {
    let limit: Int
    var description: String { "refused a connection: \(limit) open (http.max-connections)" }
}
