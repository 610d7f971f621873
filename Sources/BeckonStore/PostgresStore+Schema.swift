import PostgresNIO

extension PostgresStore {
    /// The schema, as ordered migrations: the SQLite store's final schema (SQLiteStore+Schema)
    /// in PostgreSQL's types — `bigint` milliseconds and sequences, `bytea` for blobs. A
    /// migration, once released, is never edited.
    static let migrations: [(version: Int, sql: [String])] = [
        (1, [
            """
            CREATE TABLE app (
                id text PRIMARY KEY,
                bundle_id text NOT NULL,
                team_id text NOT NULL,
                apns_key_id text,
                apns_key_reference text,
                environments text NOT NULL,
                delivery_defaults bytea NOT NULL,
                limits text NOT NULL,
                created_at bigint NOT NULL,
                updated_at bigint NOT NULL
            )
            """,
            """
            CREATE TABLE api_key (
                id text PRIMARY KEY,
                app_id text NOT NULL REFERENCES app(id) ON DELETE CASCADE,
                name text,
                hash bytea NOT NULL,
                created_at bigint NOT NULL,
                revoked_at bigint
            )
            """,
            "CREATE INDEX api_key_app ON api_key(app_id)",
        ]),
    ]

    /// Brings the schema up to date. Several nodes may start at once: the first takes an
    /// advisory lock for the transaction, the others wait and then find nothing to do.
    public func migrate() async throws {
        try await client.withTransaction(logger: logger) { connection in
            try await connection.query("SELECT pg_advisory_xact_lock(\(Self.migrationLock))", logger: logger)
            try await connection.query(
                "CREATE TABLE IF NOT EXISTS beckon_migration (version integer PRIMARY KEY, applied_at bigint NOT NULL)",
                logger: logger)
            var applied = Set<Int>()
            for try await version in try await connection.query("SELECT version FROM beckon_migration", logger: logger)
                .decode(Int.self)
            {
                applied.insert(version)
            }
            for migration in Self.migrations where !applied.contains(migration.version) {
                for statement in migration.sql {
                    try await connection.query(PostgresQuery(unsafeSQL: statement), logger: logger)
                }
                try await connection.query(
                    "INSERT INTO beckon_migration (version, applied_at) VALUES (\(migration.version), \(timestamp))",
                    logger: logger)
            }
        }
    }

    /// The advisory lock that orders migrations across nodes ("BECKON" in ASCII).
    static let migrationLock: Int64 = 0x4245_434B_4F4E
}
