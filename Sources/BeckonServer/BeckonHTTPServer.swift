import BeckonDelivery
import BeckonStore
import Hummingbird
import HummingbirdCore
import HummingbirdTLS
import NIOSSL
import Logging
import NIOConcurrencyHelpers
import Prometheus
import ServiceLifecycle

/// The HTTP side of `beckon serve`: health, metrics, the API (`BeckonAPI`, `openapi.yaml`) and the
/// WebSocket sync gateway (`SyncGateway`, docs/sync-protocol.md).
public enum BeckonHTTPServer {
    /// The router, separate from the listener so tests can drive it without sockets. Its
    /// `routes` are what `openapi.yaml` must describe (a test holds them equal).
    public static func router(api: BeckonAPI, metrics: PrometheusCollectorRegistry) -> Router<BasicRequestContext> {
        let router = Router()
        // First, so it wraps every route and the not-found responder (see APIErrorMiddleware).
        router.add(middleware: APIErrorMiddleware())
        // Load balancers and orchestrators poll this; it must stay cheap.
        router.get("health") { _, _ in HealthResponse(status: "ok") }
        router.get("metrics") { _, _ -> Response in
            var headers = HTTPFields()
            headers[.contentType] = "text/plain; version=0.0.4; charset=utf-8"
            return Response(status: .ok, headers: headers, body: .init(byteBuffer: ByteBuffer(bytes: metrics.emitToBuffer())))
        }
        api.addRoutes(to: router)
        return router
    }

    /// The HTTP API and the sync gateway (`GET /v1/sync`) on one listener, as one service:
    /// run it in a `ServiceGroup`. On graceful shutdown the sync sessions are closed with 1001
    /// first, then the HTTP server drains.
    public static func application(
        configuration: BeckonServerConfiguration, store: any BeckonStore, metrics: PrometheusCollectorRegistry,
        logger: Logger
    ) throws -> BeckonService {
        try application(configuration: configuration, store: store, metrics: metrics, hub: SyncHub(), logger: logger)
    }

    /// TLS for the listener from `tls.*`, or nil for plain HTTP. TLS 1.2 or later.
    static func makeTLSConfiguration(_ configuration: BeckonServerConfiguration) throws -> TLSConfiguration? {
        guard let chainPath = configuration.http.tlsCertificateChainPath, let keyPath = configuration.http.tlsPrivateKeyPath else {
            return nil
        }
        var tls = TLSConfiguration.makeServerConfiguration(
            certificateChain: try NIOSSLCertificate.fromPEMFile(chainPath).map { .certificate($0) },
            privateKey: .privateKey(try NIOSSLPrivateKey(file: keyPath, format: .pem))
        )
        tls.minimumTLSVersion = .tlsv12
        return tls
    }

    /// - Parameters:
    ///   - hub: the sync sessions' hub; what the rest of the server asks for presence.
    ///   - events: where the API reports new messages (the delivery service's sink).
    ///   - onServerRunning: called with the bound port once listening (tests listen on port 0).
    public static func application(
        configuration: BeckonServerConfiguration, store: any BeckonStore, metrics: PrometheusCollectorRegistry,
        hub: SyncHub, events: DeliveryEventSink = .none, logger: Logger,
        onServerRunning: @escaping @Sendable (Int) async -> Void = { _ in }
    ) throws -> BeckonService {
        let api = BeckonAPI(store: store, configuration: configuration, syncHub: hub, events: events)
        let gateway = SyncGateway(
            store: store, auth: api.auth, hub: hub, limits: configuration.sync, connectsPerMinute: configuration.limits.syncConnectsPerMinute,
            logger: logger)
        let limiter = ConnectionLimiter(limit: FileDescriptorLimit.connectionLimit(configured: configuration.http.maximumConnections))
        if let configured = configuration.http.maximumConnections, configured > limiter.limit {
            logger.warning("http.max-connections is above the open-files limit less 256; lowered", metadata: [
                "configured": "\(configured)", "http.max-connections": "\(limiter.limit)",
            ])
        } else {
            logger.info("connection limit", metadata: ["http.max-connections": "\(limiter.limit)"])
        }
        let tls = try makeTLSConfiguration(configuration)
        let server = HTTPServerBuilder { responder in
            let plain = BeckonHTTPChannel(
                responder: responder, gateway: gateway,
                http1: HTTP1Channel.Configuration(idleTimeout: .seconds(Int64(configuration.http.idleSeconds))),
                requestHeadTimeout: .seconds(Int64(configuration.http.requestHeadSeconds)),
                bodyTimeout: .seconds(Int64(configuration.http.bodySeconds)))
            guard let tls else { return ConnectionLimitedChannel(base: plain, limiter: limiter) }
            return ConnectionLimitedChannel(base: try TLSChannel(plain, tlsConfiguration: tls), limiter: limiter)
        }
        let app = Application(
            router: router(api: api, metrics: metrics),
            server: server,
            configuration: .init(address: .hostname(configuration.http.host, port: configuration.http.port), serverName: "beckon"),
            onServerRunning: { channel in await onServerRunning(channel.localAddress?.port ?? 0) },
            logger: logger
        )
        return BeckonService(
            app: app, hub: hub, api: api, grace: .seconds(configuration.shutdownGraceSeconds), logger: logger)
    }
}

/// `beckon serve`'s listener and its sync hub as one `Service`. Inside, the two run in a
/// group of their own so that graceful shutdown reaches the hub first (sessions get 1001 and
/// end) and the HTTP server after it.
///
/// Hummingbird drains open requests for as long as they last; a client trickling a body, or a
/// handler stuck on its store, would hold SIGTERM past `shutdown.grace-seconds`. After the grace
/// the two are cancelled: connections still open are closed and their requests fail unanswered
/// (nothing unanswered was acknowledged).
public struct BeckonService: Service {
    let app: any Service
    public let hub: SyncHub
    /// The API the listener serves; the XEP-0357 component posts through the same one, so that
    /// the app's rate limits are one budget, not one per entry point.
    public let api: BeckonAPI
    let grace: Duration
    let logger: Logger

    public func run() async throws {
        // Shut down in reverse: sessions first, then the listener.
        var configuration = ServiceGroupConfiguration(services: [app, hub], logger: logger)
        configuration.maximumGracefulShutdownDuration = grace
        let group = ServiceGroup(configuration: configuration)
        let shuttingDown = NIOLockedValueBox(false)
        do {
            try await withGracefulShutdownHandler {
                try await group.run()
            } onGracefulShutdown: {
                shuttingDown.withLockedValue { $0 = true }
                Task { await group.triggerGracefulShutdown() }
            }
        } catch where shuttingDown.withLockedValue({ $0 }) && !Task.isCancelled {
            // The grace ran out and the listener was cancelled: the rest of the node (delivery
            // planning the last events) still stops in order.
            logger.info("the listener was closed after shutdown.grace-seconds", metadata: ["error": "\(error)"])
        }
    }
}

struct HealthResponse: ResponseCodable {
    var status: String
}
