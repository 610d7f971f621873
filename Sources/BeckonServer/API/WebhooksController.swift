import BeckonEvents
import BeckonStore
import Foundation
import Hummingbird

/// The app's webhook as its backend sees it (docs/webhooks.md): how far behind it is, the log
/// of attempts, and a replay. The app's API key; an app without a webhook is 404.
struct WebhooksController: Sendable {
    let store: any EventLog
    /// The apps with a webhook, by id.
    let apps: [String: AppEvents]
    let limits: LimitsConfiguration
    let auth: Authenticator
    let now: @Sendable () -> Date

    func addRoutes(to router: Router<some RequestContext>) {
        router.get("v1/webhook") { request, _ in try await status(request) }
        router.get("v1/webhook/attempts") { request, _ in try await attempts(request) }
        router.post("v1/webhook/replay") { request, _ in try await replay(request) }
    }

    /// `GET /v1/webhook`: where events go and how far behind they are.
    func status(_ request: Request) async throws -> Response {
        let app = try await webhookApp(request)
        guard let status = try await store.eventLogStatus(appID: app.appID, now: now()) else {
            throw APIError.notFound("app \(app.appID)'s event log is not on yet")
        }
        return APIResponse.json(.ok, WebhookStatusBody(app: app, status: status, now: now()))
    }

    /// `GET /v1/webhook/attempts?limit=N`: the newest attempts first (default 50, at most 1000).
    func attempts(_ request: Request) async throws -> Response {
        let app = try await webhookApp(request)
        var limit = 50
        if let text = request.uri.queryParameters["limit"] {
            guard let value = Int(text), (1...1_000).contains(value) else {
                throw APIError.invalidField("limit", "must be a whole number from 1 to 1000")
            }
            limit = value
        }
        let attempts = try await store.webhookAttempts(appID: app.appID, limit: limit)
        return APIResponse.json(.ok, ["attempts": attempts.map(WebhookAttemptBody.init)])
    }

    /// `POST /v1/webhook/replay` with `fromEventId` (that event and every one after it) or `since`
    /// (every event from that time): the webhook's cursor goes back and those events are sent
    /// again, in order, as long as they are kept (`webhook.retention-hours`). Never forward.
    func replay(_ request: Request) async throws -> Response {
        let app = try await webhookApp(request)
        let reader = try JSONObjectReader(
            try await RequestBody.json(request, limit: limits.bodyBytes), path: "", allowed: ["fromEventId", "since"])
        let position: EventPosition
        switch (try reader.string("fromEventId", maxLength: 20), try reader.string("since", maxLength: 64)) {
        case (let id?, nil):
            guard let id = Int64(id), let found = try await store.eventPosition(appID: app.appID, id: id) else {
                throw APIError.notFound("no event \(id) is kept for app \(app.appID) (webhook.retention-hours)")
            }
            position = EventPosition(transaction: found.transaction, sequence: found.sequence - 1)
        case (nil, let since?):
            guard let date = APIJSON.parseTimestamp(since) else {
                throw APIError.invalidField("since", "must be an RFC 3339 time, like 2026-11-28T17:00:00Z")
            }
            position = try await store.eventPosition(appID: app.appID, before: date)
        default:
            throw APIError.invalidField("fromEventId", "give fromEventId or since, one of them")
        }
        try await store.rewindWebhook(appID: app.appID, to: position)
        return try await status(request)
    }

    private func webhookApp(_ request: Request) async throws -> AppEvents {
        let key = try await auth.apiKey(request.headers[.authorization])
        guard let app = apps[key.appID] else {
            throw APIError.notFound("app \(key.appID) has no webhook (apps.\(key.appID).webhook.url)")
        }
        return app
    }
}

/// `GET /v1/webhook`'s answer (openapi.yaml, `WebhookStatus`).
struct WebhookStatusBody: Encodable {
    var url: String
    /// The last event the receiver took (or that was dropped); "0" before any.
    var cursor: String
    var behind: Int
    var oldestWaitingAt: String?
    var lagSeconds: Double
    var dropped: Int
    var sender: String?
    var lastAttempt: WebhookAttemptBody?

    init(app: AppEvents, status: EventLogStatus, now: Date) {
        url = app.webhook.url.description
        cursor = String(status.cursor.sequence)
        behind = status.behind
        oldestWaitingAt = status.oldestWaiting.map(APIJSON.timestamp)
        lagSeconds = status.oldestWaiting.map { max(0, (now.timeIntervalSince($0) * 1000).rounded() / 1000) } ?? 0
        dropped = status.dropped
        sender = status.sender
        lastAttempt = status.lastAttempt.map(WebhookAttemptBody.init)
    }
}

/// One attempt as the API shows it (openapi.yaml, `WebhookAttempt`).
struct WebhookAttemptBody: Encodable {
    var id: String
    var at: String
    var firstEventId: String
    var lastEventId: String
    var events: Int
    var status: Int
    var error: String?
    var durationMs: Int

    init(_ attempt: WebhookAttempt) {
        id = String(attempt.id)
        at = APIJSON.timestamp(attempt.at)
        firstEventId = String(attempt.firstEvent)
        lastEventId = String(attempt.lastEvent)
        events = attempt.events
        status = attempt.status
        error = attempt.error
        durationMs = Int((attempt.duration * 1000).rounded())
    }
}
