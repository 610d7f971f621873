import APNSCore
import BeckonProtocol
import Foundation
import PostgresNIO

extension PostgresStore: PushOutbox {
    /// Claims due pushes for this node until `leaseUntil`: rows another node holds are skipped,
    /// not waited for (`SKIP LOCKED`), and a claim whose node died comes due again when its
    /// lease runs out — no restart needed. A retry's schedule is its `next_attempt_at`.
    public func claimPushes(appID: String, before date: Date, limit: Int, leaseUntil: Date) async throws -> [OutboxPush] {
        try await transaction { connection in
            var pushes: [OutboxPush] = []
            let rows = try await connection.query(
                """
                UPDATE push_outbox SET next_attempt_at = \(leaseUntil.millisecondsSince1970)
                WHERE id IN (SELECT id FROM push_outbox
                             WHERE state = 'pending' AND app_id = \(appID) AND next_attempt_at <= \(date.millisecondsSince1970)
                             ORDER BY next_attempt_at LIMIT \(limit) FOR UPDATE SKIP LOCKED)
                RETURNING id, app_id, device_id, token_kind, reason, strategy, push_type, topic, priority, expiration,
                          collapse_id, payload, message_count, ringing_call_id, ringing_until, attempts, created_at, apns_id
                """, logger: logger)
            var unreadable: [String] = []
            for try await row in rows {
                let columns = row.makeRandomAccess()
                do {
                    pushes.append(try Self.outboxPush(columns))
                } catch {
                    unreadable.append(try columns["id"].decode(String.self))
                }
            }
            // A row that no longer passes APNs' checks is given up alone, so it cannot stall the queue.
            for id in unreadable {
                try await connection.query(
                    "UPDATE push_outbox SET state = 'failed', apns_reason = 'Unreadable' WHERE id = \(id)", logger: logger)
            }
            return pushes.sorted { $0.createdAt < $1.createdAt }
        }
    }

    /// With several nodes, a claim is not this node's to release: it comes due again when its
    /// lease runs out (`claimPushes`). So this does nothing here.
    public func releaseClaims(now: Date) async throws -> Int { 0 }

    /// Concurrent results share transactions (PostgresGroupCommit, `PostgresCompletion`): one
    /// commit per push would make each push cost a WAL flush of its own.
    public func completePush(id: String, result: PushAttemptResult) async throws {
        try await completions.write(PostgresCompletion(id: id, result: result, now: timestamp))
    }

    static func outboxPush(_ row: PostgresRandomAccessRow) throws -> OutboxPush {
        let id = try row["id"].decode(String.self)
        func value<T: RawRepresentable>(_ column: String, _ type: T.Type) throws -> T where T.RawValue == String {
            let raw = try row[column].decode(String.self)
            guard let value = T(rawValue: raw) else {
                throw BeckonStoreError.invalidArgument(field: "push_outbox.\(column)", reason: "unknown value \(raw) in \(id)")
            }
            return value
        }
        guard let key = UUID(uuidString: id),
            let apnsID = UUID(uuidString: try row["apns_id"].decode(String?.self) ?? id),
            let priority = APNSPriority(rawValue: try row["priority"].decode(Int.self))
        else { throw BeckonStoreError.invalidArgument(field: "push_outbox", reason: "unreadable apns-id or priority in \(id)") }
        let expiration = try row["expiration"].decode(String?.self).map(APNSExpiration.init(headerValue:)) ?? .default
        guard let expiration else {
            throw BeckonStoreError.invalidArgument(field: "push_outbox.expiration", reason: "unreadable in \(id)")
        }
        let notification = try APNSRenderedNotification(
            restoring: try value("push_type", APNSPushType.self), topic: try row["topic"].decode(String.self), priority: priority,
            expiration: expiration, collapseID: try row["collapse_id"].decode(String?.self), apnsID: apnsID,
            payload: Array(try row["payload"].decode(Data.self)))
        return OutboxPush(
            device: DeviceRef(appID: try row["app_id"].decode(String.self), deviceID: try row["device_id"].decode(String.self)),
            tokenKind: try value("token_kind", PushTokenKind.self), reason: try value("reason", PushReason.self),
            strategy: try value("strategy", DeliveryStrategy.self), notification: notification,
            messageCount: try row["message_count"].decode(Int.self), ringingCallID: try row["ringing_call_id"].decode(String?.self),
            ringingUntil: try row["ringing_until"].decode(Int64?.self).map(Date.init(millisecondsSince1970:)),
            attempts: try row["attempts"].decode(Int.self),
            createdAt: Date(millisecondsSince1970: try row["created_at"].decode(Int64.self)), id: key)
    }
}
