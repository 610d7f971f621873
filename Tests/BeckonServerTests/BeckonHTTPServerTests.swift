@testable import BeckonServer
import BeckonStore
import Hummingbird
import HummingbirdTesting
import Metrics
import Prometheus
import Testing

@Suite struct BeckonHTTPServerTests {
    static func router(metrics: PrometheusCollectorRegistry) throws -> Router<BasicRequestContext> {
        let api = BeckonAPI(store: try SQLiteStore(location: .inMemory), configuration: .defaults)
        return BeckonHTTPServer.router(api: api, metrics: metrics)
    }

    @Test func healthAnswersOK() async throws {
        let app = Application(router: try Self.router(metrics: PrometheusCollectorRegistry()))
        try await app.test(.router) { client in
            try await client.execute(uri: "/health", method: .get) { response in
                #expect(response.status == .ok)
                #expect(String(buffer: response.body) == #"{"status":"ok"}"#)
            }
        }
    }

    @Test func metricsAreInPrometheusTextFormat() async throws {
        let registry = PrometheusCollectorRegistry()
        Counter(label: "beckon_test_total", factory: PrometheusMetricsFactory(registry: registry)).increment(by: 3)
        let app = Application(router: try Self.router(metrics: registry))
        try await app.test(.router) { client in
            try await client.execute(uri: "/metrics", method: .get) { response in
                #expect(response.status == .ok)
                #expect(response.headers[.contentType]?.hasPrefix("text/plain") == true)
                #expect(String(buffer: response.body).contains("beckon_test_total 3"))
            }
        }
    }

    @Test func unknownPathsAre404() async throws {
        let app = Application(router: try Self.router(metrics: PrometheusCollectorRegistry()))
        try await app.test(.router) { client in
            try await client.execute(uri: "/nope", method: .get) { response in
                #expect(response.status == .notFound)
                #expect(String(buffer: response.body).hasPrefix(#"{"error":{"code":"not_found""#))
            }
        }
    }
}
