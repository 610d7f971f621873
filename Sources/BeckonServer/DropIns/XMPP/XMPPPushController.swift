import BeckonDelivery
import BeckonJSON
import BeckonProtocol
import BeckonStore
import BeckonXMPP
import Crypto
import Foundation
import Hummingbird
import Logging

/// XEP-0357 pushes: apps register here, and the XMPP component's publishes become pushes
/// (docs/drop-ins.md, "XMPP").
struct XMPPPushController: Sendable {
    let store: any DeviceDirectory
    /// `limits.*`: body sizes.
    let limits: LimitsConfiguration
    /// `xmpp.*`, when the component is configured.
    let settings: XMPPSettings?
    let apps: [String: AppDeclaration]
    let userTokens: UserTokenVerifier
    let messageRate: RateLimiter?
    let dropIns: DropInIntake
    let now: @Sendable () -> Date

    func addRoutes(to router: Router<some RequestContext>) {
        router.post("v1/xmpp/registrations") { request, context in try await registerXMPPPush(request, context) }
    }

    /// `POST /v1/xmpp/registrations`: an app registers its APNs token for XEP-0357 pushes and gets
    /// what it enables push with on its XMPP server: the component's `jid`, a `node` and a
    /// `secret` (docs/drop-ins.md). Authenticated with a user token of `xmpp.app`, or with none
    /// when `xmpp.open-registration` is on (an app with no backend, as Monal). The same token
    /// always gets the same node; registering again after Apple refused the token takes it anew.
    func registerXMPPPush(_ request: Request, _ context: some RequestContext) async throws -> Response {
        guard let settings = settings, let app = apps[settings.appID] else {
            throw APIError.notFound("XEP-0357 pushes are not configured here (xmpp.*)")
        }
        if settings.openRegistration && request.headers[.authorization] == nil {
            // Anyone may register: the app's message rate bounds how fast devices are written.
            try messageRate?.take(app.id, now: now())
        } else {
            guard case .other(let token) = BearerCredential(authorization: request.headers[.authorization]) else {
                throw APIError.unauthorized("this route needs a user token from the app's backend: Authorization: Bearer <JWT>")
            }
            let user = try userTokens.verify(token, now: now())
            guard user.appID == app.id else { throw APIError.forbidden("the user token is for another app than xmpp.app") }
        }
        let body = try JSONObjectReader(
            try await RequestBody.json(request, limit: limits.bodyBytes), path: "", allowed: ["token", "environment"])
        let token = try body.requiredString("token", maxLength: 200)
        guard DropInDevice.isHexToken(token) else { throw APIError.invalidField("token", "must be an APNs token in hex (8 to 100 bytes)") }
        let environment = try body.enumeration("environment", PushEnvironment.self) ?? app.defaultDropInEnvironment
        guard app.environments.contains(environment) else {
            throw APIError.invalidField("environment", "\(environment.rawValue) is not one of the app's environments")
        }
        guard let device = try await dropIns.device(
            app: app, source: .xmpp, key: token.lowercased(), token: token, environment: environment, registeredAt: now())
        else { throw APIError(status: .internalServerError, code: .internalError, message: "the device was not registered") }
        return APIResponse.json(.created, XMPPRegistration(
            jid: settings.componentJID, node: device.id, secret: settings.secret(forNode: device.id)))
    }

    /// What the component answers an XEP-0357 publish: a push for the node's device through the
    /// planner, or an error. `cancel` errors (an unknown node, a wrong secret, a token Apple
    /// refused) make the XMPP server drop the registration after a few; `wait` errors (busy,
    /// store unavailable) do not.
    func publish(_ publish: PushPublish, settings: XMPPSettings, logger: Logger) async -> XMPPElement {
        let jid = settings.componentJID
        guard let app = apps[settings.appID] else {
            return publish.error(from: jid, type: "cancel", condition: "internal-server-error")
        }
        let expected = settings.secret(forNode: publish.node)
        guard let secret = publish.secret, Authenticator.constantTimeEquals(Array(secret.utf8), Array(expected.utf8)) else {
            logger.debug("an XEP-0357 publish with a wrong secret", metadata: ["node": "\(publish.node)"])
            return publish.error(from: jid, type: "cancel", condition: "forbidden", text: "the secret does not match the node")
        }
        do {
            guard let device = try await store.device(DeviceRef(appID: app.id, deviceID: publish.node)),
                device.pushToken != nil, device.pushProblem == nil
            else {
                logger.debug("an XEP-0357 publish for a node with no device or no usable token", metadata: ["node": "\(publish.node)"])
                return publish.error(from: jid, type: "cancel", condition: "item-not-found", text: "no device for this node; register again")
            }
            // The summary's sender and body are hints only the `content` strategy shows (rule 1);
            // Prosody sends neither unless configured to.
            let hints = NotificationHints(
                title: publish.summary["last-message-sender"], body: publish.summary["last-message-body"])
            try messageRate?.take(app.id, now: now())
            var payload: [String: JSONValue] = ["node": .string(publish.node)]
            if let count = publish.summary["message-count"].flatMap(Int.init) { payload["messageCount"] = .int(count) }
            try await dropIns.post(
                app: app, device: device, payload: .object(payload),
                hints: hints.title == nil && hints.body == nil ? nil : hints, expiresAt: nil, extras: PushExtras())
            return publish.result(from: jid)
        } catch {
            let refused = APIError(error, logger: logger)
            return publish.error(from: jid, type: "wait", condition: refused.status == .tooManyRequests ? "resource-constraint" : "internal-server-error")
        }
    }
}

/// What an app enables XEP-0357 push with (its `<enable jid=… node=…>` and the `secret` field of
/// its publish options).
struct XMPPRegistration: Encodable {
    var jid: String
    var node: String
    var secret: String
}
