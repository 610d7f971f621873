import Foundation
import GRDB

extension SQLiteStore: CredentialVerifier {
    public func authenticateAPIKey(_ presented: String) async throws -> AppAPIKey? {
        guard let parsed = SecretToken.parse(presented, kind: SecretToken.apiKeyPrefix) else { return nil }
        return try await writer.read { db in
            guard let row = try Row.fetchOne(
                db, sql: "SELECT * FROM api_key WHERE id = ? AND revoked_at IS NULL", arguments: [parsed.id])
            else { return nil }
            guard SecretToken.matches(presented, storedHash: row["hash"]) else { return nil }
            return AppAPIKey(row: row)
        }
    }

    public func authenticateDevice(credential: String) async throws -> Device? {
        guard let parsed = SecretToken.parse(credential, kind: SecretToken.deviceCredentialPrefix) else { return nil }
        return try await writer.read { db in
            guard let row = try Row.fetchOne(
                db.cachedStatement(sql: "SELECT \(Device.columns) FROM device WHERE credential_id = ?"),
                arguments: [parsed.id]),
                let hash = row["credential_hash"] as Data?,
                SecretToken.matches(credential, storedHash: hash)
            else { return nil }
            return try Device(row: row)
        }
    }
}
