import Hummingbird

extension BeckonAPI {
    /// `GET /v1/sync` without a WebSocket upgrade. Upgrade requests are served by the sync
    /// gateway's router (`SyncGateway.router()`); one it refuses lands here, so a missing or
    /// wrong credential is answered 401 with the usual error body before any upgrade
    /// (docs/sync-protocol.md, "Connecting"). A request with a valid credential but no upgrade
    /// is 426.
    func syncWithoutUpgrade(_ request: Request, _ context: some RequestContext) async throws -> Response {
        _ = try await authenticateDevice(request)
        throw APIError(
            status: .init(code: 426, reasonPhrase: "Upgrade Required"), code: "upgrade_required",
            message: "GET /v1/sync is a WebSocket: send Upgrade: websocket (docs/sync-protocol.md)")
    }
}
