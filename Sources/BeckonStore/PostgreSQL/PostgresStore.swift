import Foundation
import Logging
import PostgresNIO

/// The durable store on PostgreSQL, for several nodes on one database (selected with
/// `database.url` = `postgres://…`; docs/cluster.md): every `BeckonStore` role, plus what the
/// nodes share besides the data (`ClusterStore`).
///
/// Run it (`run()`) in the node's service group: the client's connection pool lives there.
public final class PostgresStore: BeckonStore, Sendable {
    let client: PostgresClient
    let logger: Logger
    let now: @Sendable () -> Date
    /// Concurrent appends share transactions (PostgresGroupCommit, PostgresAppend).
    let appends: PostgresGroupCommit<PostgresAppend>
    /// Concurrent cursor moves share transactions too (`PostgresAck`).
    let acks: PostgresGroupCommit<PostgresAck>
    /// And push results (`PostgresCompletion`).
    let completions: PostgresGroupCommit<PostgresCompletion>

    /// `url`: `postgres://user[:password]@host[:port]/database`. No TLS yet (loopback and private
    /// networks only, until the TLS settings land).
    public init(url: String, logger given: Logger, now: @escaping @Sendable () -> Date = { Date() }) throws {
        // PostgresNIO gets this logger with every query; at trace it would write result rows.
        let logger = NoTraceLogHandler.capping(given)
        guard let components = URLComponents(string: url), components.scheme == "postgres" || components.scheme == "postgresql",
            let host = components.host, let user = components.user
        else { throw BeckonStoreError.invalidArgument(field: "database.url", reason: "is not postgres://user@host[:port]/database") }
        let database = components.path.hasPrefix("/") ? String(components.path.dropFirst()) : components.path
        let configuration = PostgresClient.Configuration(
            host: host, port: components.port ?? 5432, username: user, password: components.password,
            database: database.isEmpty ? nil : database, tls: .disable)
        self.client = PostgresClient(configuration: configuration, backgroundLogger: logger)
        self.logger = logger
        self.now = now
        self.appends = PostgresGroupCommit(client: client, logger: logger)
        self.acks = PostgresGroupCommit(client: client, logger: logger)
        self.completions = PostgresGroupCommit(client: client, logger: logger)
    }

    /// Keeps the connection pool; returns when the task is cancelled.
    public func run() async {
        await client.run()
    }

    /// A transaction; the closure's own error comes out as itself (postgres-nio wraps it), so
    /// callers see `BeckonStoreError`s as the SQLite store throws them.
    func transaction<Result>(_ body: (PostgresConnection) async throws -> sending Result) async throws -> sending Result {
        do {
            return try await client.withTransaction(logger: logger, body)
        } catch let error as PostgresTransactionError {
            if let inner = error.closureError, error.rollbackError == nil { throw inner }
            throw error
        }
    }

    /// A statement no query can carry binds for (`CREATE DATABASE`): tests and the simulator only.
    public func execute(unsafeSQL sql: String) async throws {
        try await client.query(PostgresQuery(unsafeSQL: sql), logger: logger)
    }

    // MARK: Helpers

    /// Runs a statement with `RETURNING`; whether it returned a row (it changed something).
    func returnsRow(_ query: PostgresQuery) async throws -> Bool {
        try await Self.hasRow(client.query(query, logger: logger))
    }

    static func hasRow(_ rows: PostgresRowSequence) async throws -> Bool {
        for try await _ in rows { return true }
        return false
    }

    var timestamp: Int64 { Int64((now().timeIntervalSince1970 * 1000).rounded(.down)) }
}
