import Hummingbird
import Logging
import Prometheus

/// The HTTP side of `beckon serve`. This first slice serves health and metrics; the device
/// registry, mailbox and sync gateway routes join it (issue 4).
public enum BeckonHTTPServer {
    /// The router, separate from the listener so tests can drive it without sockets.
    public static func router(metrics: PrometheusCollectorRegistry) -> Router<BasicRequestContext> {
        let router = Router()
        // Load balancers and orchestrators poll this; it must stay cheap.
        router.get("health") { _, _ in HealthResponse(status: "ok") }
        router.get("metrics") { _, _ -> Response in
            var headers = HTTPFields()
            headers[.contentType] = "text/plain; version=0.0.4; charset=utf-8"
            return Response(status: .ok, headers: headers, body: .init(byteBuffer: ByteBuffer(bytes: metrics.emitToBuffer())))
        }
        return router
    }

    public static func application(
        configuration: BeckonServerConfiguration, metrics: PrometheusCollectorRegistry, logger: Logger
    ) -> some ApplicationProtocol {
        Application(
            router: router(metrics: metrics),
            configuration: .init(address: .hostname(configuration.host, port: configuration.port), serverName: "beckon"),
            logger: logger
        )
    }
}

struct HealthResponse: ResponseCodable {
    var status: String
}
