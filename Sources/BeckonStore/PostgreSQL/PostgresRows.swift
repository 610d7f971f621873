import BeckonProtocol
import Foundation
import PostgresNIO

// Decoding PostgreSQL rows into the public models (the SQLite store decodes its own rows).

extension Device {
    init(postgres row: PostgresRandomAccessRow) throws {
        func date(_ column: String) throws -> Date { Date(millisecondsSince1970: try row[column].decode(Int64.self)) }
        func optionalDate(_ column: String) throws -> Date? {
            try row[column].decode(Int64?.self).map(Date.init(millisecondsSince1970:))
        }
        let environment = try row["environment"].decode(String.self)
        guard let parsed = PushEnvironment(rawValue: environment) else {
            throw BeckonStoreError.invalidArgument(field: "environment", reason: "unknown value \(environment) in the database")
        }
        self.init(
            appID: try row["app_id"].decode(String.self),
            id: try row["id"].decode(String.self),
            userID: try row["user_id"].decode(String.self),
            bundleID: try row["bundle_id"].decode(String.self),
            environment: parsed,
            pushToken: try row["push_token"].decode(String?.self),
            pushTokenRegisteredAt: try optionalDate("push_token_registered_at"),
            voipToken: try row["voip_token"].decode(String?.self),
            voipTokenRegisteredAt: try optionalDate("voip_token_registered_at"),
            capabilities: try StoreJSON.decode(DeviceCapabilities.self, from: try row["capabilities"].decode(String.self)),
            locale: try row["locale"].decode(String?.self),
            appVersion: try row["app_version"].decode(String?.self),
            hasCredential: try row["has_credential"].decode(Bool.self),
            pushProblem: try row["push_problem"].decode(String?.self),
            contentKey: try row["content_key"].decode(Data?.self),
            createdAt: try date("created_at"),
            updatedAt: try date("updated_at"))
    }
}

extension Message {
    init(postgres row: PostgresRandomAccessRow) throws {
        let kind = try row["kind"].decode(String.self)
        let urgency = try row["urgency"].decode(String.self)
        guard let parsedKind = MessageKind(rawValue: kind), let parsedUrgency = MessageUrgency(rawValue: urgency) else {
            throw BeckonStoreError.invalidArgument(field: "message", reason: "unknown kind or urgency in the database")
        }
        self.init(
            id: try row["id"].decode(String.self),
            appID: try row["app_id"].decode(String.self),
            kind: parsedKind,
            payload: try row["payload"].decode(Data?.self) ?? Data(),
            hints: try row["hints"].decode(String?.self).map { try StoreJSON.decode(NotificationHints.self, from: $0) },
            urgency: parsedUrgency,
            expiresAt: try row["expires_at"].decode(Int64?.self).map(Date.init(millisecondsSince1970:)),
            idempotencyKey: try row["idempotency_key"].decode(String?.self),
            createdAt: Date(millisecondsSince1970: try row["created_at"].decode(Int64.self)))
    }
}
