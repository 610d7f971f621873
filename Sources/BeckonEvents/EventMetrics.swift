import Metrics

/// What the webhooks report to Prometheus, per app.
struct EventMetrics: Sendable {
    let factory: any MetricsFactory

    func sent(_ appID: String, events: Int) {
        Counter(label: "beckon_webhook_events_sent_total", dimensions: [("app", appID)], factory: factory)
            .increment(by: events)
    }

    /// `ok` (2xx), `refused` (any other status) or `unanswered`.
    func attempt(_ appID: String, outcome: String) {
        Counter(label: "beckon_webhook_attempts_total", dimensions: [("app", appID), ("outcome", outcome)], factory: factory)
            .increment()
    }

    func dropped(_ appID: String, events: Int) {
        Counter(label: "beckon_webhook_dropped_events_total", dimensions: [("app", appID)], factory: factory)
            .increment(by: events)
    }

    /// How many events wait, and for how long the oldest has.
    func behind(_ appID: String, events: Int, seconds: Double) {
        Gauge(label: "beckon_webhook_behind_events", dimensions: [("app", appID)], factory: factory).record(events)
        Gauge(label: "beckon_webhook_lag_seconds", dimensions: [("app", appID)], factory: factory).record(seconds)
    }
}
