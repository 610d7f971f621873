import BeckonStore
import Hummingbird

/// The operator's routes (the admin token): API keys and a user's devices.
struct AdminController: Sendable {
    let store: any (AppRegistry & APIKeyRegistry & DeviceDirectory)
    /// `limits.*`: body and payload sizes.
    let limits: LimitsConfiguration
    let apps: [String: AppDeclaration]
    let auth: Authenticator

    func addRoutes(to router: Router<some RequestContext>) {
        router.post("v1/admin/apps/{appId}/keys") { request, context in try await createAPIKey(request, context) }
        router.delete("v1/admin/apps/{appId}/keys/{keyId}") { request, context in try await revokeAPIKey(request, context) }
        router.get("v1/admin/apps/{appId}/users/{userId}/devices") { request, context in try await userDevices(request, context) }
    }

    /// `POST /v1/admin/apps/{appId}/keys`: issues an API key for the app's backend. The key is
    /// in this answer and nowhere else (only its SHA-256 is stored), so the operator stores it
    /// in the backend's secrets at once.
    func createAPIKey(_ request: Request, _ context: some RequestContext) async throws -> Response {
        try auth.admin(request.headers[.authorization])
        let appID = try Identifier.path("appId", of: context)
        var name: String?
        if request.headers[.contentType] != nil {
            let body = try await RequestBody.json(request, limit: limits.bodyBytes)
            name = try JSONObjectReader(body, path: "", allowed: ["name"]).string("name", maxLength: 255)
        }
        guard try await store.app(id: appID) != nil else { throw APIError.notFound("no app \(appID)") }
        let issued = try await store.createAPIKey(appID: appID, name: name)
        return APIResponse.json(.created, IssuedAPIKeyBody(
            id: issued.key.id, appId: issued.key.appID, name: issued.key.name, key: issued.secret,
            createdAt: APIJSON.timestamp(issued.key.createdAt)))
    }

    /// `DELETE /v1/admin/apps/{appId}/keys/{keyId}`: revokes a key at once.
    func revokeAPIKey(_ request: Request, _ context: some RequestContext) async throws -> Response {
        try auth.admin(request.headers[.authorization])
        let appID = try Identifier.path("appId", of: context)
        let keyID = try Identifier.path("keyId", of: context)
        guard try await store.revokeAPIKey(appID: appID, keyID: keyID) else {
            throw APIError.notFound("no key \(keyID) of app \(appID)")
        }
        auth.apiKeys.forget(keyID: keyID)
        return APIResponse.noContent()
    }

    /// `GET /v1/admin/apps/{appId}/users/{userId}/devices`: what an operator looks at when a user
    /// says a phone gets nothing: the user's devices, their tokens and capabilities.
    func userDevices(_ request: Request, _ context: some RequestContext) async throws -> Response {
        try auth.admin(request.headers[.authorization])
        let appID = try Identifier.path("appId", of: context)
        let userID = try Identifier.path("userId", of: context)
        guard try await store.app(id: appID) != nil else { throw APIError.notFound("no app \(appID)") }
        let devices = try await store.devices(of: UserRef(appID: appID, userID: userID))
        return APIResponse.json(.ok, UserDevicesBody(appId: appID, userId: userID, devices: devices.map(DeviceBody.init)))
    }
}

/// The answer to `GET /v1/admin/apps/{appId}/users/{userId}/devices`.
struct UserDevicesBody: ResponseEncodable {
    var appId: String
    var userId: String
    var devices: [DeviceBody]
}

/// A new API key: the only time `key` is shown.
struct IssuedAPIKeyBody: Encodable {
    var id: String
    var appId: String
    var name: String?
    var key: String
    var createdAt: String
}
