import Foundation

/// An app's event log and where it goes (`apps.<id>.webhook.*`; docs/webhooks.md). The log is
/// on for the apps with a webhook; the event stream (`GET /v1/events`) reads the same log.
public struct AppEvents: Sendable, Equatable {
    public var appID: String
    /// Where the app's events are POSTed.
    public var webhook: WebhookSettings
    /// The most events kept waiting for the webhook (`webhook.backlog`); beyond it the oldest
    /// are dropped unsent, counted, and said on the status page.
    public var backlog: Int
    /// How long sent events are kept for replays and the stream's resumption
    /// (`webhook.retention-hours`).
    public var retention: TimeInterval

    public static let defaultBacklog = 1_000_000
    public static let defaultRetention: TimeInterval = 24 * 3_600

    public init(appID: String, webhook: WebhookSettings, backlog: Int = defaultBacklog, retention: TimeInterval = defaultRetention) {
        self.appID = appID
        self.webhook = webhook
        self.backlog = backlog
        self.retention = retention
    }
}
