import BeckonDelivery
import BeckonProtocol
import BeckonStore
import Foundation
import Hummingbird

/// Messages: the backend posts them, a device's extension fetches one.
struct MessagesController: Sendable {
    let store: any (DeviceDirectory & MailboxStore & MessageTraceStore)
    /// `limits.*`: body and payload sizes.
    let limits: LimitsConfiguration
    let auth: Authenticator
    let intake: MessageIntake
    let events: DeliveryEventSink
    let messageRate: RateLimiter?
    let now: @Sendable () -> Date

    func addRoutes(to router: Router<some RequestContext>) {
        router.post("v1/messages") { request, context in try await postMessage(request, context) }
        router.get("v1/messages/{messageId}") { request, context in try await getMessage(request, context) }
    }

    /// `HTTPFields.Element` is swift-http-types' `HTTPField`, which Hummingbird does not export.
    static let idempotencyKeyHeader = HTTPFields.Element.Name("Idempotency-Key")!

    /// `POST /v1/messages`: the app's backend posts one message for users and devices of its app.
    ///
    /// The message is committed before the answer (design rule 9), so a 2xx means it will be
    /// delivered. 202 for a new message; 200 with `duplicate: true` and the original id and
    /// positions when the idempotency key was used before for the same content; 409 when it was
    /// used for different content.
    func postMessage(_ request: Request, _ context: some RequestContext) async throws -> Response {
        let key = try await auth.apiKey(request.headers[.authorization])
        try messageRate?.take(key.appID, now: now())
        // The declared app's limits, as `declareApps` saved them: no read per post.
        let appLimits = AppLimits(maxPayloadBytes: limits.payloadBytes)
        let body = try MessageRequest(
            try await RequestBody.json(request, limit: limits.bodyBytes),
            maxRecipients: appLimits.maxRecipientsPerMessage)

        let payloadLimit = min(limits.payloadBytes, appLimits.maxPayloadBytes)
        guard body.payload.count <= payloadLimit else {
            throw APIError.tooLarge("payload: \(body.payload.count) bytes is more than \(payloadLimit) (limits.payload-bytes)")
        }

        // The header (the IETF draft's name, also Stripe's) or the field; both must agree.
        let header = request.headers[Self.idempotencyKeyHeader]
        if let header, let problem = Identifier.problem(header) { throw APIError.invalidField("Idempotency-Key", problem) }
        if let header, let field = body.idempotencyKey, header != field {
            throw APIError.invalidField("idempotencyKey", "differs from the Idempotency-Key header")
        }

        // Devices are addressed within the key's app only, so a key never reaches another app.
        var users = body.users
        for (index, deviceID) in body.devices.enumerated() {
            guard let device = try await store.device(DeviceRef(appID: key.appID, deviceID: deviceID)) else {
                throw APIError.invalidField("recipients.devices[\(index)]", "no device \(deviceID) in app \(key.appID)")
            }
            users.append(device.userID)
        }

        let expiresAt = body.expiresAt ?? body.ttlSeconds.map { now().addingTimeInterval(TimeInterval($0)) }
        if let expiresAt, expiresAt <= now() { throw APIError.invalidField("expiresAt", "is in the past") }
        let message = NewMessage(
            recipients: users, kind: body.kind, payload: body.payload, hints: body.hints, urgency: body.urgency,
            expiresAt: expiresAt, idempotencyKey: header ?? body.idempotencyKey)
        guard let appended = try await intake.append(appID: key.appID, message) else {
            throw APIError(status: .internalServerError, code: .internalError, message: "the store stored nothing")
        }
        return APIResponse.json(appended.isDuplicate ? .ok : .accepted, bytes: AcceptedMessageBody(appended).json)
    }

    /// `GET /v1/messages/{messageId}`: a device fetches one message of its user's mailbox, what a
    /// notification service extension does in its 30 s (docs/design.md, "service-extension"). A
    /// message of another user, another app or past its expiry is 404, never 403, so ids of
    /// other users' messages cannot be probed. The message counts as shown on the device.
    func getMessage(_ request: Request, _ context: some RequestContext) async throws -> Response {
        let device = try await auth.device(request.headers[.authorization])
        let messageID = try Identifier.path("messageId", of: context)
        guard let entry = try await store.mailboxEntry(for: device.user, messageID: messageID.lowercased()),
            entry.message.expiresAt.map({ $0 > now() }) ?? true
        else { throw APIError.notFound("no message \(messageID) for this device") }
        // Fetched by the device itself: its extension shows it, so the planner stops re-pushing
        // and escalating it for this device (the cursor moves only with sync acks).
        let at = now()
        events.submit(.shown(device.ref, messageIDs: [entry.message.id], at: at))
        // In its trace: the device has it, and shows it (docs/trace.md).
        try await store.recordReceipts([.synced, .shown].map {
            MessageReceipt(device: device.ref, messageID: entry.message.id, kind: $0, at: at)
        })
        return APIResponse.json(.ok, MailboxMessageBody(entry))
    }
}
