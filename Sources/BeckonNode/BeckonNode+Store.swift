import BeckonServer
import BeckonStore
import Logging

extension BeckonNode {
    /// Opens the SQLite store at `database.path` (creating it on first start) and saves the
    /// declared apps into it, before anything listens.
    public static func openStore(configuration: BeckonServerConfiguration, logger: Logger) async throws -> SQLiteStore {
        let store = try SQLiteStore(
            path: configuration.database.path,
            memory: SQLiteStore.Memory(cacheMiB: configuration.database.cacheMiB, mmapMiB: configuration.database.mmapMiB),
            logger: logger)
        try await BeckonAPI(store: store, configuration: configuration).declareApps()
        return store
    }

    /// A PostgreSQL store (`database.url`): its schema brought up to date and the declared apps
    /// saved. Its connection pool must be running (`PostgresStore.run()`) before this is called.
    public static func openPostgresStore(_ store: PostgresStore, configuration: BeckonServerConfiguration) async throws {
        try await store.migrate()
        try await BeckonAPI(store: store, configuration: configuration).declareApps()
    }
}
