import BeckonJSON
import Foundation
import PostgresNIO

extension PostgresStore: AppRegistry {
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

    // MARK: Helpers

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
