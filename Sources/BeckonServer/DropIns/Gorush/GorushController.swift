import BeckonDelivery
import BeckonJSON
import Foundation
import Hummingbird

/// gorush's `/api/push` (docs/drop-ins.md, "gorush").
struct GorushController: Sendable {
    /// `limits.*`: body sizes.
    let limits: LimitsConfiguration
    /// The declared apps, in the order of `apps.ids`.
    let declared: [AppDeclaration]
    let apps: [String: AppDeclaration]
    let auth: Authenticator
    let messageRate: RateLimiter?
    let dropIns: DropInIntake
    let now: @Sendable () -> Date

    func addRoutes(to router: Router<some RequestContext>) {
        router.post("api/push") { request, context in try await gorushPush(request, context) }
    }

    /// `POST /api/push`: gorush's API for iOS notifications, so a backend that calls gorush works
    /// unchanged (docs/drop-ins.md). Each entry's `topic` (the bundle id) names the app, which
    /// must take gorush requests (`apps.<id>.gorush`: `open` as gorush itself, or `key` for its
    /// API key); each token becomes a device of its own, and the notification a message for it
    /// through the planner. Answers as gorush: `{"counts", "logs", "success": "ok"}`, where
    /// `counts` is the pushes accepted and `logs` the tokens that were not, with why.
    func gorushPush(_ request: Request, _ context: some RequestContext) async throws -> Response {
        do {
            // gorush reads the body as JSON whatever its Content-Type (a plain `curl -d` says form data).
            let body = try JSONObjectReader(
                try await RequestBody.json(request, limit: limits.bodyBytes, anyContentType: true), path: "",
                allowed: nil)
            guard case .array(let list)? = body.value("notifications"), !list.isEmpty else {
                throw APIError.invalidField("notifications", "request body is empty or the notifications array is empty")
            }
            let notifications = try list.enumerated().map { (index, item) throws(APIError) in
                try GorushNotification(item, path: "notifications[\(index)]")
            }
            // Every entry's app, credential and size first: a refusal then leaves nothing half
            // pushed for the backend to retry whole.
            var apps: [AppDeclaration?] = []
            for (index, notification) in notifications.enumerated() {
                guard notification.platform == GorushNotification.iOS else {
                    apps.append(nil)
                    continue
                }
                try dropIns.checkExtras(PushExtras(custom: notification.data), field: "notifications[\(index)].data")
                apps.append(try await gorushApp(notification.topic, authorization: request.headers[.authorization]))
            }
            var counts = 0
            var logs: [GorushLog] = []
            for (notification, app) in zip(notifications, apps) {
                guard let app else {
                    let platform = [2: "android", 3: "huawei"][notification.platform] ?? "platform \(notification.platform)"
                    logs += notification.tokens.map { .init(platform: platform, token: $0, error: "Beckon serves iOS only") }
                    continue
                }
                // An entry Beckon does not push (a Live Activity, a background push with an alert,
                // a payload APNs would refuse) fails its own tokens, not the batch.
                let push: RelayedPush
                switch notification.push {
                case .success(let relayed):
                    if let problem = relayed.problem(custom: PushExtras(custom: notification.data).custom, bundleID: app.bundleID) {
                        logs += notification.tokens.map { .init(token: $0, error: problem) }
                        continue
                    }
                    push = relayed
                case .failure(let refusal):
                    logs += notification.tokens.map { .init(token: $0, error: refusal.reason) }
                    continue
                }
                for token in notification.tokens {
                    guard DropInDevice.isHexToken(token) else {
                        logs.append(.init(token: token, error: "not a device token (hex, 8 to 100 bytes)"))
                        continue
                    }
                    do {
                        try messageRate?.take(app.id, now: now())
                    } catch {
                        // The tokens before it were taken: say which were not, rather than fail
                        // the request and have it retried whole.
                        logs.append(.init(token: token, error: error.message))
                        continue
                    }
                    guard let device = try await dropIns.device(
                        app: app, source: .gorush, key: token.lowercased(), token: token,
                        environment: notification.environment ?? app.defaultDropInEnvironment)
                    else {
                        logs.append(.init(token: token, error: "APNs refused this token (Unregistered or BadDeviceToken); register it again"))
                        continue
                    }
                    try await dropIns.post(
                        app: app, device: device, payload: .object(notification.data), hints: notification.hints,
                        expiresAt: notification.expiresAt, extras: PushExtras(custom: notification.data, badge: push.badge, relay: push))
                    counts += 1
                }
            }
            return APIResponse.json(.ok, GorushAnswer(counts: counts, logs: logs, success: "ok"))
        } catch {
            let error = APIError(error, logger: context.logger)
            var response = APIResponse.json(error.status, GorushError(message: error.message))
            for field in error.headers { response.headers.append(field) }
            return response
        }
    }

    /// The app a gorush entry is for: its `topic` (bundle id), or without one the only app that
    /// takes gorush requests; checked against `apps.<id>.gorush`.
    private func gorushApp(_ topic: String?, authorization: String?) async throws -> AppDeclaration {
        let served = declared.filter { $0.gorush != .off }
        let app: AppDeclaration
        if var topic {
            // A push type's topic names the app by its bundle id (apns.md A.3: `.voip`,
            // `.push-type.liveactivity`…): the entry is then refused on its own, not the batch.
            for suffix in [".push-type.liveactivity", ".voip", ".voip-ptt", ".complication", ".pushkit.fileprovider"] where topic.hasSuffix(suffix) {
                topic.removeLast(suffix.count)
            }
            guard let match = served.first(where: { $0.bundleID == topic }) else {
                throw APIError.invalidField("topic", "no app with bundle id \(topic) takes gorush requests (apps.<id>.gorush)")
            }
            app = match
        } else {
            guard served.count == 1, let only = served.first else {
                throw APIError.invalidField("topic", "is required: \(served.count) apps take gorush requests")
            }
            app = only
        }
        if app.gorush == .key {
            let key = try await auth.apiKey(authorization)
            guard key.appID == app.id else { throw APIError.forbidden("the API key is for another app than \(app.bundleID)") }
        }
        return app
    }
}

/// gorush's answer, and its log entry for a token it did not push.
struct GorushAnswer: Encodable {
    var counts: Int
    var logs: [GorushLog]
    var success: String
}

struct GorushLog: Encodable {
    var type = "failed-push"
    var platform = "ios"
    var token: String
    var message = ""
    var error: String
}

/// gorush's error form.
struct GorushError: Encodable {
    var message: String
}
