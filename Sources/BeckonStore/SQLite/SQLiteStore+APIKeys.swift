import Foundation
import GRDB

extension SQLiteStore: APIKeyRegistry {
    public func createAPIKey(appID: String, name: String?) async throws -> IssuedAPIKey {
        let issued = SecretToken.issue(kind: SecretToken.apiKeyPrefix)
        let now = timestamp
        let key = try await writer.write { db in
            try Self.requireApp(db, id: appID)
            try db.execute(
                sql: "INSERT INTO api_key (id, app_id, name, hash, created_at) VALUES (?, ?, ?, ?, ?)",
                arguments: [issued.id, appID, name, issued.hash, now])
            return AppAPIKey(id: issued.id, appID: appID, name: name, createdAt: Date(millisecondsSince1970: now))
        }
        logger.info("API key created", metadata: ["app": "\(appID)", "key": "\(key.prefix)"])
        return IssuedAPIKey(key: key, secret: issued.text)
    }

    public func apiKeys(appID: String) async throws -> [AppAPIKey] {
        try await writer.read { db in
            try Row.fetchAll(db, sql: "SELECT * FROM api_key WHERE app_id = ? ORDER BY created_at, id", arguments: [appID])
                .map(AppAPIKey.init(row:))
        }
    }

    public func revokeAPIKey(appID: String, keyID: String) async throws -> Bool {
        let now = timestamp
        return try await writer.write { db in
            try db.execute(
                sql: "UPDATE api_key SET revoked_at = ? WHERE app_id = ? AND id = ? AND revoked_at IS NULL",
                arguments: [now, appID, keyID])
            return db.changesCount > 0
        }
    }
}
