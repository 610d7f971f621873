import Foundation
import PostgresNIO

extension PostgresStore: APIKeyRegistry {
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
}
