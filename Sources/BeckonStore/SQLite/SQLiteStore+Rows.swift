import BeckonProtocol
import Foundation
import GRDB

// Decoding rows into the public models. The models stay free of GRDB so that another store can
// produce the same values from its own rows.

extension Row {
    func date(_ column: String) -> Date {
        Date(millisecondsSince1970: self[column])
    }

    func optionalDate(_ column: String) -> Date? {
        (self[column] as Int64?).map(Date.init(millisecondsSince1970:))
    }

    /// The date at `index` (rows read by position).
    func optionalDate(at index: Int) -> Date? {
        (self[index] as Int64?).map(Date.init(millisecondsSince1970:))
    }

    func enumValue<T: RawRepresentable>(_ column: String) throws -> T where T.RawValue == String {
        try Self.enumValue(self[column], column: column)
    }

    /// The value at `index` (rows read by position), named `column` in the error.
    func enumValue<T: RawRepresentable>(at index: Int, column: String) throws -> T where T.RawValue == String {
        try Self.enumValue(self[index], column: column)
    }

    private static func enumValue<T: RawRepresentable>(_ raw: String, column: String) throws -> T
    where T.RawValue == String {
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
            environments: try StoreJSON.decodeRepeated(Set<PushEnvironment>.self, from: row["environments"]),
            deliveryDefaults: row["delivery_defaults"],
            limits: try StoreJSON.decodeRepeated(AppLimits.self, from: row["limits"]),
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
    /// The columns `init(row:)` reads, in its order: reading by position, not by name, since
    /// devices are read for every planning step and every claimed push.
    static let columns = """
        app_id, id, user_id, bundle_id, environment, push_token, push_token_registered_at, voip_token,
        voip_token_registered_at, capabilities, locale, app_version, credential_hash, push_problem,
        content_key, created_at, updated_at
        """

    /// A row of `SELECT \(Device.columns) FROM device ...`.
    init(row: Row) throws {
        self.init(
            appID: row[0],
            id: row[1],
            userID: row[2],
            bundleID: row[3],
            environment: try row.enumValue(at: 4, column: "environment"),
            pushToken: row[5],
            pushTokenRegisteredAt: row.optionalDate(at: 6),
            voipToken: row[7],
            voipTokenRegisteredAt: row.optionalDate(at: 8),
            capabilities: try StoreJSON.decodeRepeated(DeviceCapabilities.self, from: row[9]),
            locale: row[10],
            appVersion: row[11],
            hasCredential: row[12] as Data? != nil,
            pushProblem: row[13],
            contentKey: row[14],
            createdAt: Date(millisecondsSince1970: row[15]),
            updatedAt: Date(millisecondsSince1970: row[16]))
    }
}

extension Message {
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
