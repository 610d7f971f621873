import Metrics

/// The sync gateway's metrics (exported at /metrics):
///
/// - `beckon_sync_sessions`: live sessions (`SyncHub.sessionCount`);
/// - `beckon_sync_sessions_opened_total`;
/// - `beckon_sync_sessions_ended_total{end=…}`, by `SyncSessionEnd` (a replaced session counts
///   when it is replaced);
/// - `beckon_sync_messages_sent_total`: `message` frames written;
/// - `beckon_sync_acks_total`: acks stored (including the cursor of `hello`).
struct SyncMetrics: Sendable {
    let sessions: Gauge
    let opened: Counter
    let messagesSent: Counter
    let acks: Counter
    private let endings: [SyncSessionEnd: Counter]

    init(factory: any MetricsFactory) {
        sessions = Gauge(label: "beckon_sync_sessions", factory: factory)
        opened = Counter(label: "beckon_sync_sessions_opened_total", factory: factory)
        messagesSent = Counter(label: "beckon_sync_messages_sent_total", factory: factory)
        acks = Counter(label: "beckon_sync_acks_total", factory: factory)
        // Made up front so every ending shows from the start, at 0.
        var endings: [SyncSessionEnd: Counter] = [:]
        for end in SyncSessionEnd.allCases {
            endings[end] = Counter(label: "beckon_sync_sessions_ended_total", dimensions: [("end", end.rawValue)], factory: factory)
        }
        self.endings = endings
    }

    func ended(_ end: SyncSessionEnd) {
        endings[end]?.increment()
    }
}
