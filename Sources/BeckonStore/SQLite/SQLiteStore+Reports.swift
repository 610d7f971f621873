import APNSCore
import Foundation
import GRDB

extension SQLiteStore: DeliveryReports {
    public func pushRecords(appID: String, since date: Date) async throws -> [PushRecord] {
        try await writer.read { db in
            try Row.fetchAll(
                db,
                sql: """
                    SELECT reason, strategy, push_type, state, status, message_count, wake, wake_latency_ms, created_at,
                           apns_reason
                    FROM push_outbox WHERE app_id = ? AND created_at >= ?
                    """,
                arguments: [appID, date.millisecondsSince1970]
            ).map { row in
                PushRecord(
                    reason: row["reason"], strategy: row["strategy"], pushType: row["push_type"], state: row["state"],
                    status: row["status"],
                    messageCount: row["message_count"], wake: row["wake"],
                    wakeLatency: (row["wake_latency_ms"] as Int64?).map { Double($0) / 1000 },
                    createdAt: Date(millisecondsSince1970: row["created_at"]), apnsReason: row["apns_reason"])
            }
        }
    }

    public func appCounts(appID: String) async throws -> AppCounts {
        try await writer.read { db in
            let count = { (sql: String) in try Int.fetchOne(db, sql: sql, arguments: [appID]) ?? 0 }
            return AppCounts(
                devices: try count("SELECT count(*) FROM device WHERE app_id = ?"),
                devicesWithoutToken: try count(
                    "SELECT count(*) FROM device WHERE app_id = ? AND push_token IS NULL AND voip_token IS NULL"),
                pendingPushes: try count("SELECT count(*) FROM push_outbox WHERE app_id = ? AND state = 'pending'"))
        }
    }

    public func unreachableDeviceCount(appID: String) async throws -> Int {
        try await writer.read { db in
            try Int.fetchOne(
                db, sql: "SELECT count(*) FROM delivery_state WHERE app_id = ? AND unreachable", arguments: [appID]) ?? 0
        }
    }

    public func shownShares(appID: String, from: Date, to: Date, within: TimeInterval) async throws -> [ShownShare] {
        try await writer.read { db in
            try Row.fetchAll(
                db, sql: ShownShare.query(
                    app: ":app", from: ":from", to: ":to", within: ":within", fromID: ":fromID", toID: ":toID",
                    messagesOf: { "json_each(\($0)) AS j" }),
                arguments: [
                    "app": appID, "from": from.millisecondsSince1970, "to": to.millisecondsSince1970, "within": Int64(within * 1000),
                    "fromID": UUID.timeOrderedPrefix(at: from), "toID": UUID.timeOrderedPrefix(at: to),
                ]
            ).map { ShownShare(strategy: $0[0], messages: $0[1], shown: $0[2]) }
        }
    }
}
