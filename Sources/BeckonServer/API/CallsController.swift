import BeckonDelivery
import BeckonProtocol
import BeckonStore
import Foundation
import Hummingbird

/// Calls: the backend ends a call, and the callees' devices stop ringing.
struct CallsController: Sendable {
    let store: any CallStore
    /// `limits.*`: body and payload sizes.
    let limits: LimitsConfiguration
    let auth: Authenticator
    let events: DeliveryEventSink
    let syncHub: SyncHub?
    let now: @Sendable () -> Date

    func addRoutes(to router: Router<some RequestContext>) {
        router.post("v1/calls/{callId}/end") { request, context in try await endCall(request, context) }
    }

    /// `POST /v1/calls/{callId}/end` with `{"outcome": ...}`: the backend says a call is over
    /// (rule 6). Ringing stops at once: the planner replaces each ringing alert (same collapse id)
    /// with the outcome, connected devices get a `callEnded` frame, and the dispatcher drops any
    /// VoIP or ring push of the call still in the outbox. Idempotent: ending it again with the
    /// same outcome answers the same; another outcome is 409; an id that is not a call is 404.
    func endCall(_ request: Request, _ context: some RequestContext) async throws -> Response {
        let key = try await auth.apiKey(request.headers[.authorization])
        let callID = try Identifier.path("callId", of: context).lowercased()
        let body = try await RequestBody.json(request, limit: limits.bodyBytes)
        let reader = try JSONObjectReader(body, path: "", allowed: ["outcome"])
        guard let outcome = try reader.enumeration("outcome", CallEndOutcome.self) else {
            throw APIError.invalidField("outcome", "required: one of \(CallEndOutcome.allCases.map(\.rawValue).joined(separator: ", "))")
        }
        switch try await store.endCall(appID: key.appID, callID: callID, outcome: outcome.rawValue, at: now()) {
        case .ended(let users, let at):
            // The planner first (it replaces ringing alerts), then the live sessions.
            events.submit(.callEnded(callID: callID, outcome: outcome, users: users, at: at))
            await syncHub?.callEnded(for: users, callID: callID, outcome: outcome)
            return APIResponse.json(.ok, CallEndBody(callId: callID, outcome: outcome.rawValue, endedAt: APIJSON.timestamp(at)))
        case .alreadyEnded(let previous, let at):
            guard previous == outcome.rawValue else {
                throw APIError(status: .conflict, code: .conflict, message: "call \(callID) already ended: \(previous)")
            }
            // A retry may follow a crash between the commit and telling the planner and the
            // sessions: tell them again (both are idempotent: the call is no longer ringing).
            let users = try await store.recipients(appID: key.appID, messageID: callID)
            events.submit(.callEnded(callID: callID, outcome: outcome, users: users, at: at))
            await syncHub?.callEnded(for: users, callID: callID, outcome: outcome)
            return APIResponse.json(.ok, CallEndBody(callId: callID, outcome: previous, endedAt: APIJSON.timestamp(at)))
        }
    }
}

/// The answer to `POST /v1/calls/{callId}/end`.
struct CallEndBody: ResponseEncodable {
    var callId: String
    var outcome: String
    var endedAt: String
}
