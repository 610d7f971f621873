import Logging
import PostgresNIO

/// What `PostgresClient` and `PostgresConnection` share: running a query.
protocol PostgresQueryRunner: Sendable {
    func run(_ query: PostgresQuery, logger: Logger) async throws -> PostgresRowSequence
}

extension PostgresClient: PostgresQueryRunner {
    func run(_ query: PostgresQuery, logger: Logger) async throws -> PostgresRowSequence { try await self.query(query, logger: logger) }
}

extension PostgresConnection: PostgresQueryRunner {
    func run(_ query: PostgresQuery, logger: Logger) async throws -> PostgresRowSequence { try await self.query(query, logger: logger) }
}
