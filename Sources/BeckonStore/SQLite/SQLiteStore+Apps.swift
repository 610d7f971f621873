import BeckonJSON
import Foundation
import GRDB

extension SQLiteStore: AppRegistry {
    @discardableResult
    public func createApp(_ app: App) async throws -> App {
        let now = timestamp
        return try await writer.write { db in
            if try Self.appExists(db, id: app.id) {
                throw BeckonStoreError.alreadyExists(app.id)
            }
            try Self.upsertApp(db, app, now: now)
            return try Self.fetchApp(db, id: app.id)!
        }
    }

    @discardableResult
    public func saveApp(_ app: App) async throws -> App {
        let now = timestamp
        return try await writer.write { db in
            try Self.upsertApp(db, app, now: now)
            return try Self.fetchApp(db, id: app.id)!
        }
    }

    public func app(id: String) async throws -> App? {
        try await writer.read { db in try Self.fetchApp(db, id: id) }
    }

    public func apps() async throws -> [App] {
        try await writer.read { db in
            try Row.fetchAll(db, sql: "SELECT * FROM app ORDER BY id").map(App.init(row:))
        }
    }

    // MARK: Helpers shared by the other operations

    static func appExists(_ db: Database, id: String) throws -> Bool {
        // Cached: every append checks it.
        try Bool.fetchOne(db.cachedStatement(sql: "SELECT EXISTS (SELECT 1 FROM app WHERE id = ?)"), arguments: [id]) ?? false
    }

    static func requireApp(_ db: Database, id: String) throws {
        guard try appExists(db, id: id) else { throw BeckonStoreError.appNotFound(id) }
    }

    static func fetchApp(_ db: Database, id: String) throws -> App? {
        try Row.fetchOne(db.cachedStatement(sql: "SELECT * FROM app WHERE id = ?"), arguments: [id]).map(App.init(row:))
    }

    private static func upsertApp(_ db: Database, _ app: App, now: Int64) throws {
        guard !app.id.isEmpty else { throw BeckonStoreError.invalidArgument(field: "id", reason: "must not be empty") }
        guard case .object? = try? JSONParser.parse(app.deliveryDefaults) else {
            throw BeckonStoreError.invalidArgument(field: "deliveryDefaults", reason: "must be a JSON object")
        }
        try db.execute(
            sql: """
                INSERT INTO app (id, bundle_id, team_id, apns_key_id, apns_key_reference, environments,
                                 delivery_defaults, limits, created_at, updated_at)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                ON CONFLICT (id) DO UPDATE SET
                    bundle_id = excluded.bundle_id, team_id = excluded.team_id,
                    apns_key_id = excluded.apns_key_id, apns_key_reference = excluded.apns_key_reference,
                    environments = excluded.environments, delivery_defaults = excluded.delivery_defaults,
                    limits = excluded.limits, updated_at = excluded.updated_at
                """,
            arguments: [
                app.id, app.bundleID, app.teamID, app.apnsKeyID, app.apnsKeyReference,
                try StoreJSON.encode(app.environments.map(\.rawValue).sorted()),
                app.deliveryDefaults, try StoreJSON.encode(app.limits), now, now,
            ])
    }
}
