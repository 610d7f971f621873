import BeckonDelivery
import BeckonStore
import Foundation
import Hummingbird

/// `GET /v1/messages/{messageId}/trace`: what happened to a message, device by device
/// (docs/trace.md). The app's API key; a message of another app is 404.
struct TraceController: Sendable {
    let store: any MessageTraceStore
    let auth: Authenticator
    let now: @Sendable () -> Date

    func addRoutes(to router: Router<some RequestContext>) {
        router.get("v1/messages/{messageId}/trace") { request, context in try await trace(request, context) }
    }

    func trace(_ request: Request, _ context: some RequestContext) async throws -> Response {
        let key = try await auth.apiKey(request.headers[.authorization])
        let messageID = try Identifier.path("messageId", of: context)
        guard let records = try await store.traceRecords(appID: key.appID, messageID: messageID.lowercased()) else {
            throw APIError.notFound("no message \(messageID) in app \(key.appID)")
        }
        return APIResponse.json(.ok, TraceBody(MessageTrace(records, now: now())))
    }
}

/// The trace as the API answers it.
struct TraceBody: Encodable {
    var messageId: String
    var kind: String
    var createdAt: String
    var expiresAt: String?
    var recipients: [MessageTrace.Recipient]
    var devices: [MessageTrace.DeviceTrace]

    init(_ trace: MessageTrace) {
        messageId = trace.messageID
        kind = trace.kind.rawValue
        createdAt = APIJSON.timestamp(trace.createdAt)
        expiresAt = trace.expiresAt.map(APIJSON.timestamp)
        recipients = trace.recipients
        devices = trace.devices
    }
}
