import BeckonStore
import Foundation
import Logging
import Metrics
import ServiceLifecycle

/// Each app's events out (docs/webhooks.md): turns the store's event log on for the apps with a
/// webhook, runs a `WebhookSender` for each, and keeps the logs: logs expiries, trims what is
/// sent and past its retention or beyond the backlog, and reports how far each webhook is behind.
/// Delivery never waits for it: the events are written by the store with the records they tell
/// of, and a slow or failing receiver only makes its own log longer.
public struct EventService: Service {
    let apps: [AppEvents]
    let node: String
    let log: any EventLog
    let transport: @Sendable (AppEvents) throws -> any WebhookTransport
    let metrics: EventMetrics
    let timing: EventTiming
    let logger: Logger

    /// - Parameter transport: the POSTs' way to each app's receiver (`WebhookHTTPClient` unless
    ///   a test gives another).
    public init(
        apps: [AppEvents], node: String, log: any EventLog, metricsFactory: any MetricsFactory, timing: EventTiming = EventTiming(),
        logger: Logger = Logger(label: "beckon.events"),
        transport: @escaping @Sendable (AppEvents) throws -> any WebhookTransport = { app in
            try WebhookHTTPClient(url: app.webhook.url, timeout: app.webhook.timeout)
        }
    ) {
        self.apps = apps
        self.node = node
        self.log = log
        self.transport = transport
        self.metrics = EventMetrics(factory: metricsFactory)
        self.timing = timing
        self.logger = logger
    }

    public func run() async throws {
        try await log.setEventLogApps(Set(apps.map(\.appID)), now: timing.now())
        let senders = try apps.map { app in
            WebhookSender(
                app: app, node: node, log: log, transport: try transport(app), metrics: metrics, logger: logger, timing: timing)
        }
        // On shutdown the senders stop between attempts: what they had not sent stays in the log
        // for the next start (or another node).
        await cancelWhenGracefulShutdown {
            await withDiscardingTaskGroup { group in
                for sender in senders { group.addTask { await sender.run() } }
                group.addTask { await keepLogs() }
            }
        }
        for sender in senders { await sender.transport.shutdown() }
    }

    private func keepLogs() async {
        var lastTrim = Date.distantPast, lastLag = Date.distantPast
        while !Task.isCancelled {
            let now = timing.now()
            let trim = now.timeIntervalSince(lastTrim) >= timing.trimInterval
            if trim { lastTrim = now }
            let lag = now.timeIntervalSince(lastLag) >= timing.lagInterval
            if lag { lastLag = now }
            for app in apps {
                do {
                    try await log.recordExpiredEvents(appID: app.appID, now: now)
                    if trim {
                        let dropped = try await log.trimEventLog(appID: app.appID, backlog: app.backlog, sentBefore: now - app.retention)
                        if dropped > 0 {
                            metrics.dropped(app.appID, events: dropped)
                            logger.error("webhook backlog full: oldest events dropped unsent", metadata: [
                                "app": "\(app.appID)", "dropped": "\(dropped)", "backlog": "\(app.backlog)",
                            ])
                        }
                    }
                    if lag, let status = try await log.eventLogStatus(appID: app.appID, now: now) {
                        metrics.behind(
                            app.appID, events: status.behind, seconds: status.oldestWaiting.map { max(0, now.timeIntervalSince($0)) } ?? 0)
                    }
                } catch {
                    logger.error("event log upkeep failed", metadata: ["app": "\(app.appID)", "error": "\(error)"])
                }
            }
            try? await Task.sleep(for: .seconds(timing.sweepInterval))
        }
    }
}

// Service lifecycle logs each service by its description: never the webhooks' secrets.
extension EventService: CustomStringConvertible {
    public var description: String { "EventService(apps: \(apps.map(\.appID)), node: \(node))" }
}
