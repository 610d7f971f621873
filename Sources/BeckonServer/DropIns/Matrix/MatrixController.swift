import BeckonDelivery
import BeckonJSON
import BeckonStore
import Foundation
import Hummingbird

/// The Matrix push gateway API, in Sygnal's place (docs/drop-ins.md, "Matrix").
struct MatrixController: Sendable {
    /// `limits.*`: body sizes.
    let limits: LimitsConfiguration
    /// The declared apps, in the order of `apps.ids`.
    let declared: [AppDeclaration]
    let apps: [String: AppDeclaration]
    let messageRate: RateLimiter?
    let dropIns: DropInIntake
    let now: @Sendable () -> Date

    func addRoutes(to router: Router<some RequestContext>) {
        router.post("_matrix/push/v1/notify") { request, context in try await matrixNotify(request, context) }
    }

    /// `POST /_matrix/push/v1/notify`: Beckon as a Matrix push gateway, in Sygnal's place
    /// (docs/drop-ins.md). Each pusher's `app_id` names an app (`apps.<id>.matrix.app-ids`) and
    /// its pushkey is the APNs token in base64; the event becomes a message for that device and
    /// goes through the planner. Answers `rejected` with the pushkeys of unknown app ids, of
    /// unreadable pushkeys, and of tokens Apple has refused since the pusher was set, so the
    /// homeserver removes those pushers. Like Sygnal it takes no credential: the app ids it
    /// serves and the pushkeys, which only the homeserver and the device know, are the gate.
    func matrixNotify(_ request: Request, _ context: some RequestContext) async throws -> Response {
        do {
            let notification = try MatrixNotification(try await RequestBody.json(request, limit: limits.bodyBytes))
            for (index, pusher) in notification.devices.enumerated() {
                try dropIns.checkExtras(notification.extras(for: pusher), field: "notification.devices[\(index)]")
            }
            // Each pusher's app, environment and token, and the rate, before anything is written:
            // a refusal then leaves nothing half done for the homeserver to retry.
            var rejected: [String] = []
            var served: [(pusher: MatrixNotification.Device, app: AppDeclaration, environment: PushEnvironment, token: String)] = []
            for pusher in notification.devices {
                // A `default_payload` that is not an object: Sygnal rejects the pushkey, so the
                // homeserver drops a pusher that could never be served as configured.
                guard !pusher.defaultPayloadMalformed,
                    let (app, environment) = MatrixAppIDs.resolve(pusher.appID, in: declared),
                    let token = DropInDevice.hexToken(fromBase64: pusher.pushkey)
                else {
                    rejected.append(pusher.pushkey)
                    continue
                }
                if notification.eventID != nil || notification.badgeOnly != nil { try messageRate?.take(app.id, now: now()) }
                served.append((pusher, app, environment, token))
            }
            for (pusher, app, environment, token) in served {
                let key = "\(pusher.appID)\u{0}\(pusher.pushkey)"
                // Neither an event nor counts: nothing to push or register.
                guard notification.eventID != nil || notification.badgeOnly != nil else {
                    if try await dropIns.isRefused(app: app, source: .matrix, key: key, registeredAt: pusher.registeredAt) {
                        rejected.append(pusher.pushkey)
                    }
                    continue
                }
                guard let device = try await dropIns.device(
                    app: app, source: .matrix, key: key, token: token, environment: environment,
                    registeredAt: pusher.registeredAt)
                else {
                    rejected.append(pusher.pushkey)
                    continue
                }
                var extras = notification.extras(for: pusher)
                // Counts only (after a read): the badge alone, pushed as written.
                if let badgeOnly = notification.badgeOnly { extras = PushExtras(badge: badgeOnly.badge, relay: badgeOnly) }
                try await dropIns.post(
                    app: app, device: device, payload: notification.payload, hints: notification.hints(for: pusher),
                    expiresAt: nil, extras: extras)
            }
            return APIResponse.json(.ok, MatrixRejected(rejected: rejected))
        } catch {
            return Self.matrixError(APIError(error, logger: context.logger))
        }
    }

    /// The Matrix error form (`{"errcode", "error"}`) of one of our errors: a homeserver reads
    /// that, and retries with backoff on a 5xx or 429.
    static func matrixError(_ error: APIError) -> Response {
        let code: String = switch error.code {
        case .malformedJSON, .unsupportedMediaType: "M_NOT_JSON"
        case .tooLarge: "M_TOO_LARGE"
        case .rateLimited: "M_LIMIT_EXCEEDED"
        case .invalidField, .unknownField, .badRequest: "M_BAD_JSON"
        default: "M_UNKNOWN"
        }
        var body: [String: JSONValue] = ["errcode": .string(code), "error": .string(error.message)]
        if let retry = error.headers[.retryAfter].flatMap(Int.init) { body["retry_after_ms"] = .int(retry * 1000) }
        var headers = error.headers
        headers[.contentType] = "application/json; charset=utf-8"
        return Response(status: error.status, headers: headers, body: .init(byteBuffer: ByteBuffer(bytes: JSONValue.object(body).bytes)))
    }
}

/// The answer of a Matrix push gateway.
struct MatrixRejected: Encodable {
    var rejected: [String]
}
