import BeckonProtocol
import Foundation
import GRDB

// Decoding rows into the public models. The models stay free of GRDB so that another store can
// produce the same values from its own rows.

enum StoreJSON {
    static func encode<T: Encodable>(_ value: T) throws -> String {
        let encoder = JSONEncoder()
        // Sorted keys: the same value is the same text (fingerprints depend on it).
        encoder.outputFormatting = [.sortedKeys]
        return String(decoding: try encoder.encode(value), as: UTF8.self)
    }

    static func decode<T: Decodable>(_ type: T.Type, from text: String) throws -> T {
        try JSONDecoder().decode(type, from: Data(text.utf8))
    }
}

extension Row {
    func date(_ column: String) -> Date {
        Date(millisecondsSince1970: self[column])
    }

    func optionalDate(_ column: String) -> Date? {
        (self[column] as Int64?).map(Date.init(millisecondsSince1970:))
    }

    func enumValue<T: RawRepresentable>(_ column: String) throws -> T where T.RawValue == String {
        let raw: String = self[column]
        guard let value = T(rawValue: raw) else {
            throw DatabaseError(message: "unknown value \(raw) in column \(column)")
        }
        return value
    }
}

extension App {
    init(row: Row) throws {
        self.init(
            id: row["id"],
            bundleID: row["bundle_id"],
            teamID: row["team_id"],
            apnsKeyID: row["apns_key_id"],
            apnsKeyReference: row["apns_key_reference"],
            environments: try StoreJSON.decode(Set<PushEnvironment>.self, from: row["environments"]),
            deliveryDefaults: row["delivery_defaults"],
            limits: try StoreJSON.decode(AppLimits.self, from: row["limits"]),
            createdAt: row.date("created_at"),
            updatedAt: row.date("updated_at"))
    }
}

extension AppAPIKey {
    init(row: Row) {
        self.init(
            id: row["id"],
            appID: row["app_id"],
            name: row["name"],
            createdAt: row.date("created_at"),
            revokedAt: row.optionalDate("revoked_at"))
    }
}

extension Device {
    init(row: Row) throws {
        self.init(
            appID: row["app_id"],
            id: row["id"],
            userID: row["user_id"],
            bundleID: row["bundle_id"],
            environment: try row.enumValue("environment"),
            pushToken: row["push_token"],
            pushTokenRegisteredAt: row.optionalDate("push_token_registered_at"),
            voipToken: row["voip_token"],
            voipTokenRegisteredAt: row.optionalDate("voip_token_registered_at"),
            capabilities: try StoreJSON.decode(DeviceCapabilities.self, from: row["capabilities"]),
            locale: row["locale"],
            appVersion: row["app_version"],
            hasCredential: row["credential_hash"] as Data? != nil,
            pushProblem: row["push_problem"],
            contentKey: row["content_key"],
            createdAt: row.date("created_at"),
            updatedAt: row.date("updated_at"))
    }
}

extension Message {
    /// The columns `init(row:)` reads, qualified by the `message` table's alias `m`.
    static let columns = "m.id, m.app_id, m.kind, m.payload, m.hints, m.urgency, m.expires_at, m.idempotency_key, m.created_at"

    init(row: Row) throws {
        let hints: String? = row["hints"]
        self.init(
            id: row["id"],
            appID: row["app_id"],
            kind: try row.enumValue("kind"),
            payload: row["payload"] ?? Data(),
            hints: try hints.map { try StoreJSON.decode(NotificationHints.self, from: $0) },
            urgency: try row.enumValue("urgency"),
            expiresAt: row.optionalDate("expires_at"),
            idempotencyKey: row["idempotency_key"],
            createdAt: row.date("created_at"))
    }
}
