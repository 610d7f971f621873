import BeckonProtocol
import BeckonStore
import Foundation
import Hummingbird

/// Device registration: a user token registers, the device's credential updates and deletes.
struct DevicesController: Sendable {
    let store: any (CredentialVerifier & DeviceRegistry)
    /// `limits.*`: body and payload sizes.
    let limits: LimitsConfiguration
    let apps: [String: AppDeclaration]
    let auth: Authenticator
    let userTokens: UserTokenVerifier
    let registrationRate: RateLimiter?
    let syncHub: SyncHub?
    let now: @Sendable () -> Date

    func addRoutes(to router: Router<some RequestContext>) {
        router.post("v1/devices") { request, context in try await registerDevice(request, context) }
        router.put("v1/devices/{deviceId}") { request, context in try await updateDevice(request, context) }
        router.delete("v1/devices/{deviceId}") { request, context in try await deleteDevice(request, context) }
    }

    /// `POST /v1/devices`: an app registers its install for the user its backend vouches for with
    /// a user token. Registering again (same device id) replaces the registration and issues a
    /// new credential, which revokes the old one.
    func registerDevice(_ request: Request, _ context: some RequestContext) async throws -> Response {
        guard case .other(let token) = BearerCredential(authorization: request.headers[.authorization]) else {
            throw APIError.unauthorized("this route needs a user token from the app's backend: Authorization: Bearer <JWT>")
        }
        let user = try userTokens.verify(token, now: now())
        guard let app = apps[user.appID] else { throw APIError.unauthorized("the user token's app is not served here") }
        try registrationRate?.take(UserRef(appID: app.id, userID: user.userID).description, now: now())
        let body = try DeviceRequest(try await RequestBody.json(request, limit: limits.bodyBytes))
        guard let deviceID = body.deviceID else { throw APIError.invalidField("deviceId", "is required") }
        try await checkOwnership(of: DeviceRef(appID: app.id, deviceID: deviceID), by: user.userID, body: body)
        let registration = try body.registration(app: app, deviceID: deviceID, userID: user.userID, previous: nil)
        let (device, credential) = try await store.registerDeviceIssuingCredential(registration)
        // A live sync session holds the credential just revoked: close it with 4003.
        await syncHub?.revoke(device.ref)
        return APIResponse.json(.created, RegisteredDeviceBody(device: DeviceBody(device), credential: credential))
    }

    /// A device id is the app's choice, so a user token for one user must not be enough to take
    /// over another user's install (its tokens, cursor and credential): moving a device to
    /// another user needs its current credential, which only that install holds. The same user
    /// registering again (a reinstall that lost its credential) needs nothing more.
    private func checkOwnership(of ref: DeviceRef, by userID: String, body: DeviceRequest) async throws {
        guard let existing = try await store.device(ref), existing.userID != userID else { return }
        if let presented = body.previousCredential,
            let holder = try await store.authenticateDevice(credential: presented), holder.ref == ref
        {
            return
        }
        throw APIError(
            status: .conflict, code: .deviceOwnedByAnotherUser,
            message: "previousCredential: device \(ref.deviceID) is registered to another user; "
                + "send its current credential as previousCredential to move it, or delete it first")
    }

    /// `PUT /v1/devices/{deviceId}`: the device restates its tokens, capabilities, locale or
    /// version. Its user and credential stay.
    func updateDevice(_ request: Request, _ context: some RequestContext) async throws -> Response {
        let device = try await auth.device(request.headers[.authorization])
        let deviceID = try Identifier.path("deviceId", of: context)
        guard device.id == deviceID else { throw APIError.forbidden("the credential is for another device") }
        guard let app = apps[device.appID] else { throw APIError.forbidden("the device's app is no longer served here") }
        let body = try DeviceRequest(try await RequestBody.json(request, limit: limits.bodyBytes))
        if body.previousCredential != nil {
            throw APIError.invalidField("previousCredential", "only registration (POST /v1/devices) takes it")
        }
        if let stated = body.deviceID, stated != deviceID {
            throw APIError.invalidField("deviceId", "differs from the path's device id")
        }
        let registration = try body.registration(app: app, deviceID: deviceID, userID: device.userID, previous: device)
        let updated = try await store.registerDevice(registration)
        return APIResponse.json(.ok, DeviceBody(updated))
    }

    /// `DELETE /v1/devices/{deviceId}`: by the device itself (its credential), or by the app's
    /// backend (its API key), e.g. when the user signs out elsewhere.
    func deleteDevice(_ request: Request, _ context: some RequestContext) async throws -> Response {
        let deviceID = try Identifier.path("deviceId", of: context)
        let ref: DeviceRef
        switch BearerCredential(authorization: request.headers[.authorization]) {
        case .device:
            let device = try await auth.device(request.headers[.authorization])
            guard device.id == deviceID else { throw APIError.forbidden("the credential is for another device") }
            ref = device.ref
        case .apiKey:
            let key = try await auth.apiKey(request.headers[.authorization])
            ref = DeviceRef(appID: key.appID, deviceID: deviceID)
        default:
            throw APIError.unauthorized("this route needs a device credential (bkd_…) or an app API key (bk_…)")
        }
        guard try await store.deleteDevice(ref) else { throw APIError.notFound("no device \(deviceID)") }
        await syncHub?.revoke(ref)
        return APIResponse.noContent()
    }
}
