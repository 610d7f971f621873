import Foundation
import PostgresNIO

extension PostgresStore: CredentialVerifier {
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

    public func authenticateDevice(credential: String) async throws -> Device? {
        guard let parsed = SecretToken.parse(credential, kind: SecretToken.deviceCredentialPrefix) else { return nil }
        let rows = try await client.query(
            "SELECT \(unescaped: Self.deviceColumns), credential_hash FROM device WHERE credential_id = \(parsed.id)",
            logger: logger)
        for try await row in rows {
            let columns = row.makeRandomAccess()
            guard let hash = try columns["credential_hash"].decode(Data?.self), SecretToken.matches(credential, storedHash: hash)
            else { return nil }
            return try Device(postgres: columns)
        }
        return nil
    }
}
