import Foundation

/// How an app's events are POSTed to its receiver (`apps.<id>.webhook.*`).
public struct WebhookSettings: Sendable, Equatable {
    public var url: WebhookURL
    /// The signing secret (`webhook.secret`): `whsec_` and base64, as Standard Webhooks gives
    /// them, or any other text used as it is. Never logged.
    public var secret: String
    /// The most events in one POST (`webhook.batch-size`).
    public var batchSize: Int = 500
    /// How long a receiver has to answer (`webhook.timeout-seconds`).
    public var timeout: TimeInterval = 10
    /// The wait after the first failure, doubling up to `retryMax` (`webhook.retry-initial-seconds`,
    /// `webhook.retry-max-seconds`). There is no last retry: events wait up to the backlog.
    public var retryInitial: TimeInterval = 1
    public var retryMax: TimeInterval = 300

    public init(url: WebhookURL, secret: String) {
        self.url = url
        self.secret = secret
    }
}

// The secret never goes into text.
extension WebhookSettings: CustomStringConvertible, CustomDebugStringConvertible {
    public var description: String { "WebhookSettings(url: \(url), batchSize: \(batchSize))" }
    public var debugDescription: String { description }
}
