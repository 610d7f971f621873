import BeckonDelivery
import BeckonStore
import Crypto
import Foundation
import Hummingbird

/// The HTTP API of issue 4 over a `BeckonStore`: device registration, posting and fetching
/// messages, and the admin routes that issue API keys. Routes are in the extensions
/// (`BeckonAPI+Devices`, `+Messages`, `+Admin`); `BeckonHTTPServer` mounts them.
///
/// Who reaches what (issue 4, "Apps and auth"):
/// - an app API key (`bk_…`) acts for its app's backend and reaches only that app's users;
/// - a device credential (`bkd_…`) reaches only its own device and its user's mailbox;
/// - a user token (HS256 JWT from the app's backend) only registers a device for its `sub`;
/// - the admin token (`admin.token`) only manages API keys.
public struct BeckonAPI: Sendable {
    let store: any BeckonStore
    let configuration: BeckonServerConfiguration
    let apps: [String: AppDeclaration]
    let userTokens: UserTokenVerifier
    let now: @Sendable () -> Date
    /// The sync gateway's hub, told about new messages and deleted devices; nil without one.
    let syncHub: SyncHub?
    /// Where new messages are reported to delivery (`.none` in tests of the API alone).
    let events: DeliveryEventSink
    /// `limits.messages-per-second` per app; nil when disabled.
    let messageRate: RateLimiter?
    /// `limits.registrations-per-minute` per user; nil when disabled.
    let registrationRate: RateLimiter?
    /// Who each request is: the same checks the sync gateway uses before an upgrade.
    let auth: Authenticator

    /// - Parameter now: the clock user tokens and `ttlSeconds` are checked against; tests set it.
    /// - Parameter syncHub: the live sync sessions to wake when a message is stored.
    public init(
        store: any BeckonStore, configuration: BeckonServerConfiguration, syncHub: SyncHub? = nil,
        events: DeliveryEventSink = .none, now: @escaping @Sendable () -> Date = { Date() }
    ) {
        self.syncHub = syncHub
        self.events = events
        self.store = store
        self.configuration = configuration
        self.apps = Dictionary(configuration.apps.map { ($0.id, $0) }, uniquingKeysWith: { $1 })
        self.userTokens = UserTokenVerifier(apps: configuration.apps)
        self.auth = Authenticator(store: store, adminToken: configuration.adminToken, now: now)
        self.now = now
        let perSecond = configuration.messagesPerSecond, perMinute = configuration.registrationsPerMinute
        self.messageRate = perSecond == 0 ? nil : RateLimiter(
            name: "messages-per-second", scope: "app", perSecond: Double(perSecond), burst: Double(perSecond),
            share: syncHub?.share)
        self.registrationRate = perMinute == 0 ? nil : RateLimiter(
            name: "registrations-per-minute", scope: "user", perSecond: Double(perMinute) / 60, burst: Double(perMinute),
            share: syncHub?.share)
    }

    /// Saves every declared app to the store, so the configuration is the source of truth at each
    /// start. Apps in the store but no longer declared are left alone (their messages and devices
    /// stay), but no user token can name them any more.
    public func declareApps() async throws {
        let limits = AppLimits(maxPayloadBytes: configuration.maximumPayloadBytes)
        for app in configuration.apps {
            try await store.saveApp(app.storeApp(limits: limits))
        }
    }

    func addRoutes(to router: Router<some RequestContext>) {
        router.post("v1/devices") { request, context in try await registerDevice(request, context) }
        router.put("v1/devices/{deviceId}") { request, context in try await updateDevice(request, context) }
        router.delete("v1/devices/{deviceId}") { request, context in try await deleteDevice(request, context) }
        router.post("v1/messages") { request, context in try await postMessage(request, context) }
        router.get("v1/messages/{messageId}") { request, context in try await getMessage(request, context) }
        router.post("v1/calls/{callId}/end") { request, context in try await endCall(request, context) }
        router.get("v1/delivery/report") { request, context in try await deliveryReport(request, context) }
        router.get("v1/sync") { request, context in try await syncWithoutUpgrade(request, context) }
        router.post("v1/admin/apps/{appId}/keys") { request, context in try await createAPIKey(request, context) }
        router.delete("v1/admin/apps/{appId}/keys/{keyId}") { request, context in try await revokeAPIKey(request, context) }
        router.get("v1/admin/apps/{appId}/users/{userId}/devices") { request, context in try await userDevices(request, context) }
        router.get("v1/admin/apps/{appId}/delivery/report") { request, context in try await adminDeliveryReport(request, context) }
        router.get("status") { request, context in try await statusPage(request, context) }
        // Drop-ins for what teams already run (docs/drop-ins.md).
        router.post("_matrix/push/v1/notify") { request, context in try await matrixNotify(request, context) }
        router.post("api/push") { request, context in try await gorushPush(request, context) }
        router.post("v1/xmpp/registrations") { request, context in try await registerXMPPPush(request, context) }
    }

    // MARK: Responses

    static func json(_ status: HTTPResponse.Status, _ value: some Encodable) -> Response {
        json(status, bytes: APIJSON.encode(value))
    }

    static func json(_ status: HTTPResponse.Status, bytes: [UInt8]) -> Response {
        var headers = HTTPFields()
        headers[.contentType] = "application/json; charset=utf-8"
        return Response(status: status, headers: headers, body: .init(byteBuffer: ByteBuffer(bytes: bytes)))
    }

    static func noContent() -> Response { Response(status: .noContent) }
}

// Whatever prints the API (a service's description in a lifecycle log) must not print its
// configuration: user-token secrets and the admin token are in it.
extension BeckonAPI: CustomStringConvertible, CustomDebugStringConvertible {
    public var description: String { "BeckonAPI(apps: \(configuration.apps.map(\.id)))" }
    public var debugDescription: String { description }
}
