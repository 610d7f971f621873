import BeckonJSON
import Foundation
import PostgresNIO

extension PostgresStore {
    @discardableResult
    public func createApp(_ app: App) async throws -> App {
        guard try await returnsRow(try Self.upsert(app, now: timestamp, replacing: false)) else {
            throw BeckonStoreError.alreadyExists(app.id)
        }
        return try await self.app(id: app.id)!
    }

    @discardableResult
    public func saveApp(_ app: App) async throws -> App {
        _ = try await returnsRow(try Self.upsert(app, now: timestamp, replacing: true))
        return try await self.app(id: app.id)!
    }

    /// The app's row, inserted; an existing one is replaced or left (then nothing is returned).
    private static func upsert(_ app: App, now: Int64, replacing: Bool) throws -> PostgresQuery {
        try checkApp(app)
        let environments = try StoreJSON.encode(app.environments.map(\.rawValue).sorted())
        let limits = try StoreJSON.encode(app.limits)
        let conflict = replacing
            ? """
            DO UPDATE SET
                bundle_id = excluded.bundle_id, team_id = excluded.team_id, apns_key_id = excluded.apns_key_id,
                apns_key_reference = excluded.apns_key_reference, environments = excluded.environments,
                delivery_defaults = excluded.delivery_defaults, limits = excluded.limits, updated_at = excluded.updated_at
            """
            : "DO NOTHING"
        return try """
            INSERT INTO app (id, bundle_id, team_id, apns_key_id, apns_key_reference, environments, delivery_defaults,
                             limits, created_at, updated_at)
            VALUES (\(app.id), \(app.bundleID), \(app.teamID), \(app.apnsKeyID), \(app.apnsKeyReference), \(environments),
                    \(app.deliveryDefaults), \(limits), \(now), \(now))
            ON CONFLICT (id) \(unescaped: conflict)
            RETURNING id
            """
    }

    public func app(id: String) async throws -> App? {
        try await apps(where: "WHERE id = \(id)").first
    }

    public func apps() async throws -> [App] {
        try await apps(where: "ORDER BY id")
    }

    public func createAPIKey(appID: String, name: String?) async throws -> IssuedAPIKey {
        guard try await app(id: appID) != nil else { throw BeckonStoreError.appNotFound(appID) }
        let issued = SecretToken.issue(kind: SecretToken.apiKeyPrefix)
        let now = timestamp
        try await client.query(
            "INSERT INTO api_key (id, app_id, name, hash, created_at) VALUES (\(issued.id), \(appID), \(name), \(issued.hash), \(now))",
            logger: logger)
        let key = AppAPIKey(id: issued.id, appID: appID, name: name, createdAt: Date(millisecondsSince1970: now))
        logger.info("API key created", metadata: ["app": "\(appID)", "key": "\(key.prefix)"])
        return IssuedAPIKey(key: key, secret: issued.text)
    }

    public func authenticateAPIKey(_ presented: String) async throws -> AppAPIKey? {
        guard let parsed = SecretToken.parse(presented, kind: SecretToken.apiKeyPrefix) else { return nil }
        let rows = try await client.query(
            "SELECT id, app_id, name, created_at, revoked_at, hash FROM api_key WHERE id = \(parsed.id) AND revoked_at IS NULL",
            logger: logger)
        for try await (id, appID, name, createdAt, revokedAt, hash) in rows.decode((String, String, String?, Int64, Int64?, Data).self) {
            guard SecretToken.matches(presented, storedHash: hash) else { return nil }
            return AppAPIKey(
                id: id, appID: appID, name: name, createdAt: Date(millisecondsSince1970: createdAt),
                revokedAt: revokedAt.map(Date.init(millisecondsSince1970:)))
        }
        return nil
    }

    public func apiKeys(appID: String) async throws -> [AppAPIKey] {
        let rows = try await client.query(
            "SELECT id, app_id, name, created_at, revoked_at FROM api_key WHERE app_id = \(appID) ORDER BY created_at, id",
            logger: logger)
        var keys: [AppAPIKey] = []
        for try await (id, appID, name, createdAt, revokedAt) in rows.decode((String, String, String?, Int64, Int64?).self) {
            keys.append(AppAPIKey(
                id: id, appID: appID, name: name, createdAt: Date(millisecondsSince1970: createdAt),
                revokedAt: revokedAt.map(Date.init(millisecondsSince1970:))))
        }
        return keys
    }

    public func revokeAPIKey(appID: String, keyID: String) async throws -> Bool {
        let now = timestamp
        return try await returnsRow(
            "UPDATE api_key SET revoked_at = \(now) WHERE app_id = \(appID) AND id = \(keyID) AND revoked_at IS NULL RETURNING id")
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

    private static func checkApp(_ app: App) throws {
        guard !app.id.isEmpty else { throw BeckonStoreError.invalidArgument(field: "id", reason: "must not be empty") }
        guard case .object? = try? JSONParser.parse(app.deliveryDefaults) else {
            throw BeckonStoreError.invalidArgument(field: "deliveryDefaults", reason: "must be a JSON object")
        }
    }

    private func apps(where clause: PostgresQuery) async throws -> [App] {
        var query: PostgresQuery = """
            SELECT id, bundle_id, team_id, apns_key_id, apns_key_reference, environments, delivery_defaults, limits,
                   created_at, updated_at FROM app
            """
        query.sql += " " + clause.sql
        query.binds = clause.binds
        var apps: [App] = []
        let rows = try await client.query(query, logger: logger)
        for try await row in rows.decode((String, String, String, String?, String?, String, Data, String, Int64, Int64).self) {
            apps.append(App(
                id: row.0, bundleID: row.1, teamID: row.2, apnsKeyID: row.3, apnsKeyReference: row.4,
                environments: try StoreJSON.decode(Set<PushEnvironment>.self, from: row.5), deliveryDefaults: row.6,
                limits: try StoreJSON.decode(AppLimits.self, from: row.7),
                createdAt: Date(millisecondsSince1970: row.8), updatedAt: Date(millisecondsSince1970: row.9)))
        }
        return apps
    }
}
