import APNSCore
import Foundation
import Metrics
import NIOConcurrencyHelpers

/// The client's swift-metrics instruments. Labels are documented in README.md.
final class APNSMetrics: Sendable {
    private let factory: any MetricsFactory
    private let inFlight: Gauge
    private let queued: Gauge
    private let connections: Gauge
    private let latency: Timer
    private let retries: Counter
    /// The answer nearly every request gets, kept apart from the locked cache below.
    private let accepted: Counter
    /// Counters are made once per (status, reason) and reused: the send path should not hit the
    /// metrics factory's lock for every request.
    private let responses = NIOLockedValueBox<[String: Counter]>([:])

    init(factory: any MetricsFactory) {
        self.factory = factory
        inFlight = Gauge(label: "apns_in_flight_requests", factory: factory)
        queued = Gauge(label: "apns_queued_requests", factory: factory)
        connections = Gauge(label: "apns_open_connections", factory: factory)
        latency = Timer(label: "apns_request_duration_seconds", factory: factory)
        retries = Counter(label: "apns_retries_total", factory: factory)
        accepted = Counter(label: "apns_requests_total", dimensions: [("status", "200"), ("reason", "")], factory: factory)
    }

    func poolChanged(connections: Int, inFlight: Int, queued: Int) {
        self.connections.record(connections)
        self.inFlight.record(inFlight)
        self.queued.record(queued)
    }

    func recordResponse(_ response: APNSResponse, duration: TimeInterval) {
        latency.recordNanoseconds(Int64(duration * 1e9))
        if response.status == 200 {
            accepted.increment()
        } else {
            counter(status: String(response.status), reason: response.reason?.rawValue ?? "").increment()
        }
    }

    /// Requests that got no HTTP answer: `kind` is deadline, overloaded, connection…
    func recordFailure(_ kind: String) {
        counter(status: "none", reason: kind).increment()
    }

    func recordRetry() { retries.increment() }

    private func counter(status: String, reason: String) -> Counter {
        let key = status + "/" + reason
        return responses.withLockedValue { cache in
            if let counter = cache[key] { return counter }
            let counter = Counter(label: "apns_requests_total", dimensions: [("status", status), ("reason", reason)], factory: factory)
            cache[key] = counter
            return counter
        }
    }
}
