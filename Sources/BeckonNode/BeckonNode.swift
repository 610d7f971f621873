import APNS
import APNSEmulator
import BeckonDelivery
import BeckonEvents
import BeckonServer
import BeckonStore
import Foundation
import Logging
import Metrics
import NIOSSL
import Prometheus
import ServiceLifecycle

/// One Beckon node, assembled: the composition root of `beckon serve`. Every part that needs
/// another is wired here and nowhere else:
///
/// - APNs routes: Apple's hosts for apps with a key, the built-in emulator for the others;
/// - delivery (planner and dispatcher) over those routes, asking the hub for presence;
/// - the sync hub's session events and the API's new messages → delivery's event sink;
/// - the HTTP listener (API and sync gateway) over the store and the hub.
///
/// Run it in a `ServiceGroup`: on graceful shutdown the sessions close first (1001), then the
/// listener drains, then delivery plans the last events and stops.
public struct BeckonNode: Service {
    public let hub: SyncHub
    public let delivery: DeliveryService
    /// The apps' webhooks and their event logs.
    public let events: EventService
    /// The in-process emulator, when an app has no Apple key (tests and `beckon simulate` read it).
    public let emulator: APNSEmulator?
    /// This node's part in a cluster (several nodes on one PostgreSQL), if it is in one.
    public let cluster: PostgresCluster?
    let http: BeckonService
    let xmpp: XMPPComponent?
    let logger: Logger

    /// - Parameters:
    ///   - tick: how often due planner deadlines and the outbox are polled.
    ///   - cluster: on PostgreSQL, this node's link to the others (it joins before listening).
    ///   - onServerRunning: called with the bound port once listening (tests listen on port 0).
    public static func assemble(
        configuration: BeckonServerConfiguration, store: any BeckonStore, metrics: PrometheusCollectorRegistry,
        logger: Logger, tick: Duration = .seconds(1), metricsFactory: (any MetricsFactory)? = nil,
        cluster: PostgresCluster? = nil, onServerRunning: @escaping @Sendable (Int) async -> Void = { _ in }
    ) async throws -> BeckonNode {
        let factory = metricsFactory ?? MetricsSystem.factory
        let hub = SyncHub(metricsFactory: metricsFactory, cluster: cluster, share: cluster?.share ?? NodeShare())

        var routes: [String: any PushSender] = [:]
        var clients: [APNSClient] = []
        // One client per endpoint: Apple's hosts, or each endpoint apps name instead.
        let withKeys = Dictionary(grouping: configuration.apps.filter { $0.apnsKeyPath != nil }, by: \.apnsEndpoint)
        for (endpoint, apps) in withKeys {
            var settings = APNSClientConfiguration()
            if let endpoint {
                settings.endpointOverride = (endpoint.host, endpoint.port)
                if let caFile = endpoint.caFile { settings.additionalTrustRoots = try NIOSSLCertificate.fromPEMFile(caFile) }
            }
            let client = APNSClient(configuration: settings, logger: Logger(label: "beckon.apns"), metricsFactory: factory)
            clients.append(client)
            for app in apps {
                let key = try APNSSigningKey(teamID: app.teamID, keyID: app.apnsKeyID!, pemFile: app.apnsKeyPath!)
                routes[app.id] = APNSRoute(client: client, credential: .token(APNSProviderTokenSource(key: key)))
            }
        }
        var emulator: APNSEmulator?
        let withoutKeys = configuration.apps.filter { $0.apnsKeyPath == nil }
        if !withoutKeys.isEmpty {
            let builtIn = try await BuiltInEmulator.start(
                apps: withoutKeys, configuration: configuration, metricsFactory: factory, logger: logger)
            emulator = builtIn.emulator
            clients.append(builtIn.client)
            routes.merge(builtIn.routes) { $1 }
        }

        let delivery = DeliveryService(
            configuration: configuration.deliveryConfiguration, store: store, senders: routes,
            cutOff: { [clients] in for client in clients { await client.shutdown() } }, tick: tick,
            metricsFactory: factory, presence: cluster ?? hub as any DevicePresence)
        let events = delivery.events
        hub.observe { events.submit($0) }
        if let cluster {
            cluster.bind(hub: hub, events: events)
            try await cluster.join()
        } else {
            // A lone node: no session outlived the last process, but a planner saved as connected
            // never heard of the drop (SIGKILL, power loss). Told now, before the listener opens
            // and any device connects again, it re-pushes what is unacknowledged (rule 5). On
            // PostgreSQL the cluster ends a dead node's sessions instead (docs/cluster.md).
            let now = Date()
            for device in try await store.devicesSavedAsConnected() {
                events.submit(.disconnected(device, clean: false, at: now))
            }
        }
        let http = try BeckonHTTPServer.application(
            configuration: configuration, store: store, metrics: metrics, hub: hub, events: events, logger: logger,
            onServerRunning: onServerRunning)
        // The XEP-0357 app server's component, when `xmpp.*` is set: its publishes become
        // messages through the same API path as the drop-ins' requests.
        let xmpp = configuration.xmpp.map { settings in
            http.api.xmppComponent(settings: settings, logger: Logger(label: "beckon.xmpp"))
        }
        // Every node runs the webhooks; for each app, the one holding its lease sends.
        let eventService = EventService(
            apps: configuration.apps.compactMap(\.events), node: cluster?.nodeID ?? "local", log: store,
            metricsFactory: factory, logger: Logger(label: "beckon.events"))
        return BeckonNode(
            hub: hub, delivery: delivery, events: eventService, emulator: emulator, cluster: cluster, http: http, xmpp: xmpp, logger: logger)
    }

    public func run() async throws {
        // Shut down in reverse order: the listener and its sessions first, then delivery, so
        // the events of the last sessions are still planned (the XMPP component's last publishes
        // too), then the webhooks (what they had not sent waits in the store), then the cluster
        // link (the node leaves); the emulator last.
        let services: [any Service] = (cluster.map { [$0] } ?? []) + [events, delivery] + (xmpp.map { [$0] } ?? []) + [http]
        let group = ServiceGroup(configuration: .init(services: services, logger: logger))
        try await withGracefulShutdownHandler {
            try await group.run()
        } onGracefulShutdown: {
            Task { await group.triggerGracefulShutdown() }
        }
        try await emulator?.shutdown()
    }
}
