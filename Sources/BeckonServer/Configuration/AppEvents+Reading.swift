import BeckonEvents
import Configuration

extension AppEvents {
    /// `apps.<id>.webhook.*`; nil when the app has no `webhook.url` (its event log is off).
    init?(reading webhook: ConfigReader, appID: String, scope: String) throws(BeckonConfigurationError) {
        guard let text = webhook.string(forKey: "url") else {
            if webhook.string(forKey: "secret", isSecret: true) != nil {
                throw .invalid(key: "\(scope).url", "is required with \(scope).secret")
            }
            return nil
        }
        guard let url = WebhookURL(text) else {
            throw .invalid(key: "\(scope).url", "\"\(text)\" is not an http or https URL with a host")
        }
        guard let secret = webhook.string(forKey: "secret", isSecret: true), secret.utf8.count >= 24 else {
            throw .invalid(key: "\(scope).secret", "is required, at least 24 bytes (whsec_ and base64 of the key's bytes, or any text)")
        }
        var settings = WebhookSettings(url: url, secret: secret)
        settings.batchSize = webhook.int(forKey: "batch-size", default: settings.batchSize)
        guard (1...10_000).contains(settings.batchSize) else { throw .invalid(key: "\(scope).batch-size", "must be 1 to 10000") }
        let backlog = webhook.int(forKey: "backlog", default: AppEvents.defaultBacklog)
        guard backlog >= 1 else { throw .invalid(key: "\(scope).backlog", "must be at least 1") }
        settings.timeout = try webhook.positiveNumber("timeout-seconds", default: settings.timeout, scope: scope)
        settings.retryInitial = try webhook.positiveNumber("retry-initial-seconds", default: settings.retryInitial, scope: scope)
        settings.retryMax = try webhook.positiveNumber("retry-max-seconds", default: settings.retryMax, scope: scope)
        guard settings.retryMax >= settings.retryInitial else {
            throw .invalid(key: "\(scope).retry-max-seconds", "must be at least retry-initial-seconds")
        }
        self.init(
            appID: appID, webhook: settings, backlog: backlog,
            retention: try webhook.positiveNumber("retention-hours", default: AppEvents.defaultRetention / 3_600, scope: scope) * 3_600)
    }
}
