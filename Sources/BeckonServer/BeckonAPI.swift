import BeckonDelivery
import BeckonStore
import Crypto
import Foundation
import Hummingbird
import Logging

/// The HTTP API over a `BeckonStore`: the services every route shares (who a request is, the
/// message intake, the rate limits), built once, and the controllers that own the routes, one
/// per resource (`API/`, `DropIns/`, `XMPP/`). `BeckonHTTPServer` mounts them.
///
/// Who reaches what:
/// - an app API key (`bk_…`) acts for its app's backend and reaches only that app's users;
/// - a device credential (`bkd_…`) reaches only its own device and its user's mailbox;
/// - a user token (HS256 JWT from the app's backend) only registers a device for its `sub`;
/// - the admin token (`admin.token`) only manages API keys.
public struct BeckonAPI: Sendable {
    let store: any BeckonStore
    let configuration: BeckonServerConfiguration
    /// Who each request is: the same checks the sync gateway uses before an upgrade.
    let auth: Authenticator
    let devices: DevicesController
    let messages: MessagesController
    let calls: CallsController
    let reports: DeliveryReportController
    let traces: TraceController
    let webhooks: WebhooksController
    let eventStream: EventStreamController
    let admin: AdminController
    let status: StatusController
    let sync: SyncRouteController
    let matrix: MatrixController
    let gorush: GorushController
    /// XEP-0357: registrations here, and the XMPP component's publishes (`XMPPComponent`).
    let xmpp: XMPPPushController

    /// - Parameter now: the clock user tokens and `ttlSeconds` are checked against; tests set it.
    /// - Parameter syncHub: the live sync sessions to wake when a message is stored.
    /// - Parameter events: where new messages are reported to delivery (`.none` in tests of the
    ///   API alone).
    public init(
        store: any BeckonStore, configuration: BeckonServerConfiguration, syncHub: SyncHub? = nil,
        events: DeliveryEventSink = .none, now: @escaping @Sendable () -> Date = { Date() }
    ) {
        self.store = store
        self.configuration = configuration
        let apps = Dictionary(configuration.apps.map { ($0.id, $0) }, uniquingKeysWith: { $1 })
        let userTokens = UserTokenVerifier(apps: configuration.apps)
        let auth = Authenticator(store: store, adminToken: configuration.adminToken, now: now)
        self.auth = auth
        let perSecond = configuration.limits.messagesPerSecond, perMinute = configuration.limits.registrationsPerMinute
        // One budget per app whichever route posts: the drop-ins and XMPP share the API's.
        let messageRate = perSecond == 0 ? nil : RateLimiter(
            name: "messages-per-second", scope: "app", perSecond: Double(perSecond), burst: Double(perSecond),
            share: syncHub?.share)
        let registrationRate = perMinute == 0 ? nil : RateLimiter(
            name: "registrations-per-minute", scope: "user", perSecond: Double(perMinute) / 60, burst: Double(perMinute),
            share: syncHub?.share)
        let intake = MessageIntake(store: store, events: events, sessions: syncHub)
        let dropIns = DropInIntake(
            store: store, intake: intake, maximumPushExtrasBytes: configuration.limits.pushExtrasBytes, now: now)
        devices = DevicesController(
            store: store, limits: configuration.limits, apps: apps, auth: auth, userTokens: userTokens,
            registrationRate: registrationRate, syncHub: syncHub, now: now)
        messages = MessagesController(
            store: store, limits: configuration.limits, auth: auth, intake: intake, events: events,
            messageRate: messageRate, now: now)
        calls = CallsController(
            store: store, limits: configuration.limits, auth: auth, events: events, syncHub: syncHub, now: now)
        reports = DeliveryReportController(store: store, apps: apps, auth: auth, now: now)
        traces = TraceController(store: store, auth: auth, now: now)
        let webhookApps = Dictionary(configuration.apps.compactMap { $0.events.map { ($0.appID, $0) } }, uniquingKeysWith: { $1 })
        webhooks = WebhooksController(store: store, apps: webhookApps, limits: configuration.limits, auth: auth, now: now)
        eventStream = EventStreamController(store: store, apps: webhookApps, limits: configuration.limits, auth: auth, now: now)
        admin = AdminController(store: store, limits: configuration.limits, apps: apps, auth: auth)
        status = StatusController(
            store: store, declared: configuration.apps, apps: apps, auth: auth, syncHub: syncHub, now: now)
        sync = SyncRouteController(auth: auth)
        matrix = MatrixController(
            limits: configuration.limits, declared: configuration.apps, apps: apps, messageRate: messageRate, dropIns: dropIns, now: now)
        gorush = GorushController(
            limits: configuration.limits, declared: configuration.apps, apps: apps, auth: auth, messageRate: messageRate, dropIns: dropIns, now: now)
        xmpp = XMPPPushController(
            store: store, limits: configuration.limits, settings: configuration.xmpp, apps: apps, userTokens: userTokens, messageRate: messageRate,
            dropIns: dropIns, now: now)
    }

    /// Saves every declared app to the store, so the configuration is the source of truth at each
    /// start. Apps in the store but no longer declared are left alone (their messages and devices
    /// stay), but no user token can name them any more.
    public func declareApps() async throws {
        let limits = AppLimits(maxPayloadBytes: configuration.limits.payloadBytes)
        for app in configuration.apps {
            try await store.saveApp(app.storeApp(limits: limits))
        }
    }

    /// The XEP-0357 app server's component for `settings` (`xmpp.*`): its publishes become
    /// messages through the same path, and the same rate limits, as the drop-ins' requests.
    public func xmppComponent(settings: XMPPSettings, logger: Logger) -> XMPPComponent {
        XMPPComponent(settings: settings, pushes: xmpp, logger: logger)
    }

    func addRoutes(to router: Router<some RequestContext>) {
        devices.addRoutes(to: router)
        messages.addRoutes(to: router)
        calls.addRoutes(to: router)
        reports.addRoutes(to: router)
        traces.addRoutes(to: router)
        webhooks.addRoutes(to: router)
        eventStream.addRoutes(to: router)
        sync.addRoutes(to: router)
        admin.addRoutes(to: router)
        status.addRoutes(to: router)
        // Drop-ins for what teams already run (docs/drop-ins.md).
        matrix.addRoutes(to: router)
        gorush.addRoutes(to: router)
        xmpp.addRoutes(to: router)
    }
}

// Whatever prints the API (a service's description in a lifecycle log) must not print its
// configuration: user-token secrets and the admin token are in it.
extension BeckonAPI: CustomStringConvertible, CustomDebugStringConvertible {
    public var description: String { "BeckonAPI(apps: \(configuration.apps.map(\.id)))" }
    public var debugDescription: String { description }
}
