import BeckonStore
import Hummingbird
import Logging
import Prometheus

/// The HTTP side of `beckon serve`: health, metrics and the API of issue 4 (`BeckonAPI`). The
/// WebSocket sync gateway joins it next.
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

    /// Opens the SQLite store at `database.path` (creating it on first start) and saves the
    /// declared apps into it.
    public static func openStore(configuration: BeckonServerConfiguration, logger: Logger) async throws -> SQLiteStore {
        let store = try SQLiteStore(path: configuration.databasePath, logger: logger)
        try await BeckonAPI(store: store, configuration: configuration).declareApps()
        return store
    }

    public static func application(
        configuration: BeckonServerConfiguration, store: any BeckonStore, metrics: PrometheusCollectorRegistry,
        logger: Logger
    ) -> some ApplicationProtocol {
        Application(
            router: router(api: BeckonAPI(store: store, configuration: configuration), metrics: metrics),
            configuration: .init(address: .hostname(configuration.host, port: configuration.port), serverName: "beckon"),
            logger: logger
        )
    }
}

struct HealthResponse: ResponseCodable {
    var status: String
}
