import APNSCore
import BeckonProtocol
import Foundation
import GRDB

extension SQLiteStore: PushOutbox {
    public func claimPushes(appID: String, before date: Date, limit: Int, leaseUntil: Date) async throws -> [OutboxPush] {
        // In the group commit: a claim is a write like any other, and need not pay an fsync alone.
        try await groupCommit.write { db in
            let rows = try Row.fetchAll(
                db.cachedStatement(sql: """
                    UPDATE push_outbox SET next_attempt_at = ?
                    WHERE id IN (SELECT id FROM push_outbox WHERE state = 'pending' AND next_attempt_at <= ?
                                   AND app_id = ?
                                 ORDER BY next_attempt_at LIMIT ?)
                    RETURNING \(Self.outboxColumns)
                    """),
                arguments: [leaseUntil.millisecondsSince1970, date.millisecondsSince1970, appID, limit])
            // A row that no longer passes APNs' checks (damaged, or from an older format) is given
            // up alone, so it cannot stall the app's queue claim after claim.
            var pushes: [OutboxPush] = []
            pushes.reserveCapacity(rows.count)
            for row in rows {
                do {
                    pushes.append(try Self.outboxPush(row))
                } catch {
                    try db.execute(
                        sql: "UPDATE push_outbox SET state = 'failed', apns_reason = 'Unreadable' WHERE id = ?",
                        arguments: [row[0] as String])
                }
            }
            return pushes.sorted { $0.createdAt < $1.createdAt }
        }
    }

    public func releaseClaims(now: Date) async throws -> Int {
        try await writer.write { db in
            try db.execute(
                sql: "UPDATE push_outbox SET next_attempt_at = ? WHERE state = 'pending' AND next_attempt_at > ?",
                arguments: [now.millisecondsSince1970, now.millisecondsSince1970])
            return db.changesCount
        }
    }

    public func completePush(id: String, result: PushAttemptResult) async throws {
        let now = timestamp
        try await groupCommit.write { db in
            // Cached statements: these run for every push. Each appends the attempt to the row's
            // log, numbered by the row's count (raised by the same statement).
            switch result {
            case .sent(let at, let uniqueID):
                try db.cachedStatement(sql: """
                    UPDATE push_outbox SET state = 'sent', attempts = attempts + 1, sent_at = ?, status = 200,
                        apns_reason = NULL, attempt_log = \(Self.appendAttempt)
                    WHERE id = ?
                    """).execute(arguments: [at.millisecondsSince1970, at.millisecondsSince1970, "sent", 200, nil, uniqueID, id])
            case .failed(let status, let reason, let at):
                try db.cachedStatement(sql: """
                    UPDATE push_outbox SET state = 'failed', attempts = attempts + 1, sent_at = ?, status = ?,
                        apns_reason = ?, attempt_log = \(Self.appendAttempt)
                    WHERE id = ?
                    """).execute(arguments: [at.millisecondsSince1970, status, reason, at.millisecondsSince1970, "failed", status, reason, nil, id])
            case .retry(let status, let reason, let next):
                try db.cachedStatement(sql: """
                    UPDATE push_outbox SET attempts = attempts + 1, next_attempt_at = ?, status = ?,
                        apns_reason = ?, attempt_log = \(Self.appendAttempt)
                    WHERE id = ?
                    """).execute(arguments: [next.millisecondsSince1970, status, reason, now, "retry", status, reason, nil, id])
            }
        }
    }

    /// The row's attempt log with one more entry (`PushAttempt+Log`): its parameters are the
    /// attempt's time, outcome, status, reason and unique id; its number is `attempts + 1` (the
    /// old value: SQLite's SET expressions all read the row as it was).
    static let appendAttempt = "json_insert(coalesce(attempt_log, '[]'), '$[#]', json_array(attempts + 1, ?, ?, ?, ?, ?))"

    /// The columns `outboxPush(_:)` reads, in its order (by position: claims read many rows).
    static let outboxColumns = """
        id, app_id, device_id, token_kind, reason, strategy, push_type, topic, priority, expiration, collapse_id,
        payload, message_count, ringing_call_id, ringing_until, attempts, created_at, apns_id
        """

    /// A row of `outboxColumns`.
    static func outboxPush(_ row: Row) throws -> OutboxPush {
        let id: String = row[0]
        guard let key = UUID(uuidString: id), let apnsID = UUID(uuidString: row[17] ?? id),
            let priority = APNSPriority(rawValue: row[8]),
            let expiration = (row[9] as String?).map(APNSExpiration.init(headerValue:)) ?? .default
        else { throw DatabaseError(message: "push_outbox \(id): unreadable apns-id, priority or expiration") }
        let payload: Data = row[11]
        let notification = try APNSRenderedNotification(
            restoring: try row.enumValue(at: 6, column: "push_type"), topic: row[7], priority: priority,
            expiration: expiration, collapseID: row[10], apnsID: apnsID, payload: Array(payload))
        return OutboxPush(
            device: DeviceRef(appID: row[1], deviceID: row[2]), tokenKind: try row.enumValue(at: 3, column: "token_kind"),
            reason: try row.enumValue(at: 4, column: "reason"), strategy: try row.enumValue(at: 5, column: "strategy"),
            notification: notification, messageCount: row[12], ringingCallID: row[13],
            ringingUntil: row.optionalDate(at: 14), attempts: row[15],
            createdAt: Date(millisecondsSince1970: row[16]), id: key)
    }
}
