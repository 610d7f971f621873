import ArgumentParser
import BeckonNode
import BeckonServer
import BeckonStore
import Configuration
import Foundation
import Logging
import Metrics
import Prometheus
import ServiceLifecycle
import SystemPackage

/// `beckon serve`: the Beckon server.
struct ServeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "serve",
        abstract: "Run the Beckon server.",
        discussion: """
            Settings come from flags, then BECKON_* environment variables (BECKON_HTTP_PORT for
            http.port), then the JSON file given with --config, then the defaults (README.md).
            SIGTERM or SIGINT stops it gracefully.
            """
    )

    @Option(help: "A JSON configuration file, e.g. {\"http\":{\"port\":8080}}.") var config: String?
    @Option(help: "http.host: the address to listen on.") var host: String?
    @Option(help: "http.port: the port to listen on.") var port: Int?
    @Option(help: "database.path: the SQLite file.") var database: String?

    func run() async throws {
        var flags: [AbsoluteConfigKey: ConfigValue] = [:]
        if let host { flags["http.host"] = .init(.string(host), isSecret: false) }
        if let port { flags["http.port"] = .init(.int(port), isSecret: false) }
        if let database { flags["database.path"] = .init(.string(database), isSecret: false) }
        var providers: [any ConfigProvider] = [
            InMemoryProvider(name: "flags", values: flags),
            EnvironmentVariablesProvider().prefixKeys(with: "beckon"),
        ]
        if let config { providers.append(try await FileProvider<JSONSnapshot>(filePath: FilePath(config))) }
        var settings: BeckonServerConfiguration
        do {
            settings = try BeckonServerConfiguration(reading: ConfigReader(providers: providers))
        } catch {
            throw ValidationError(error.description)
        }
        // With no app configured, a development app, so that a first run leads somewhere.
        let development = try DevelopmentApp.prepare(&settings)

        // Before any logger exists: each takes its handler, and so its level, when made. Through
        // OutputSink, so a reader that stops reading or goes away costs log lines, not the server.
        let level = settings.logLevel
        LoggingSystem.bootstrap { label in
            var handler = StreamLogHandler(label: label, stream: OutputSink.standardOutput)
            handler.logLevel = level
            return handler
        }
        // The last lines (the stop) reach a reader that still reads; one that does not is not waited for.
        defer { OutputSink.standardOutput.flush(within: 2) }
        let logger = Logger(label: "beckon.server")
        let registry = PrometheusCollectorRegistry()
        MetricsSystem.bootstrap(PrometheusMetricsFactory(registry: registry))
        if let url = settings.database.url {
            try await servePostgres(url: url, settings: settings, registry: registry, logger: logger)
            return
        }
        // Created on first start; the declared apps are saved into it before the listener opens.
        let store = try await BeckonNode.openStore(configuration: settings, logger: Logger(label: "beckon.store"))
        var banner: String?
        if let (readApp, isNew) = development {
            var app = readApp
            let issued = try await app.ensureAPIKey(store: store, database: settings.database.path)
            banner = app.banner(database: settings.database.path, showSecrets: isNew || issued)
        }
        // With no Apple key for an app, this starts the built-in APNs emulator and says so.
        let node = try await BeckonNode.assemble(
            configuration: settings, store: store, metrics: registry, logger: logger,
            onServerRunning: { [banner] _ in
                // Not print's buffer, which would hold it when stdout is a file; nor FileHandle's
                // write, which traps when the reader has gone.
                if let banner { OutputSink.standardOutput.write(banner + "\n") }
            })
        let services = ServiceGroup(configuration: .init(
            services: [node], gracefulShutdownSignals: [.sigterm, .sigint], logger: logger))
        logger.info("starting", metadata: [
            "host": "\(settings.http.host)", "port": "\(settings.http.port)", "database": "\(settings.database.path)",
            "apps": "\(settings.apps.map(\.id))",
        ])
        do {
            try await services.run()
        } catch {
            try? store.close()
            throw error
        }
        // Every acknowledged write is already committed; closing checkpoints the WAL.
        try store.close()
    }

    /// The node on PostgreSQL (`database.url`): the connection pool runs beside the node and
    /// stops after it.
    private func servePostgres(
        url: String, settings: BeckonServerConfiguration, registry: PrometheusCollectorRegistry, logger: Logger
    ) async throws {
        let store = try PostgresStore(url: url, logger: Logger(label: "beckon.store"))
        let pool = Task { await store.run() }
        defer { pool.cancel() }
        try await BeckonNode.openPostgresStore(store, configuration: settings)
        // Every node on PostgreSQL is in a cluster, be it of one (docs/cluster.md).
        let cluster = PostgresCluster(store: store, configuration: settings.cluster, share: NodeShare(), logger: Logger(label: "beckon.cluster"))
        let node = try await BeckonNode.assemble(
            configuration: settings, store: store, metrics: registry, logger: logger, cluster: cluster)
        let services = ServiceGroup(configuration: .init(
            services: [node], gracefulShutdownSignals: [.sigterm, .sigint], logger: logger))
        logger.info("starting", metadata: [
            "host": "\(settings.http.host)", "port": "\(settings.http.port)", "database": "postgresql", "node": "\(cluster.nodeID)",
            "apps": "\(settings.apps.map(\.id))",
        ])
        try await services.run()
    }
}
