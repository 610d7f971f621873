import BeckonProtocol
import Hummingbird

/// `GET /v1/sync` reached as plain HTTP.
struct SyncRouteController: Sendable {
    let auth: Authenticator

    func addRoutes(to router: Router<some RequestContext>) {
        router.get("v1/sync") { request, context in try await syncWithoutUpgrade(request, context) }
    }

    /// `GET /v1/sync` without a WebSocket upgrade. Upgrade requests never reach the router:
    /// `BeckonHTTPChannel` decides them (`SyncGateway.decide`) and answers a refused one itself
    /// (401 before any upgrade, 429, with the usual error body; docs/sync-protocol.md,
    /// "Connecting"). A request with a valid credential but no upgrade is 426.
    func syncWithoutUpgrade(_ request: Request, _ context: some RequestContext) async throws -> Response {
        _ = try await auth.device(request.headers[.authorization])
        throw APIError(
            status: .init(code: 426, reasonPhrase: "Upgrade Required"), code: .upgradeRequired,
            message: "GET /v1/sync is a WebSocket: send Upgrade: websocket (docs/sync-protocol.md)")
    }
}
