import BeckonProtocol
import Foundation
import GRDB

extension SQLiteStore: MessageTraceStore {
    public func traceRecords(appID: String, messageID: String) async throws -> MessageTraceRecords? {
        guard let message = try await message(appID: appID, id: messageID) else { return nil }
        let (positions, pushes, receipts, reads) = try await writer.read { db in
            let positions = try Row.fetchAll(
                db, sql: "SELECT user_id, sequence FROM mailbox WHERE message_id = ? AND app_id = ?",
                arguments: [messageID, appID]
            ).map { MailboxPosition(userID: $0[0], sequence: $0[1]) }
            var pushes = try Row.fetchAll(
                db,
                sql: """
                    SELECT o.id, o.device_id, o.reason, o.strategy, o.push_type, o.priority, o.collapse_id,
                           coalesce(o.apns_id, o.id), o.message_count, o.created_at, o.state, o.wake, o.wake_latency_ms,
                           o.wake_at
                    FROM push_message pm JOIN push_outbox o ON o.id = pm.push_id
                    WHERE pm.message_id = ? AND o.app_id = ? ORDER BY o.created_at, o.id
                    """,
                arguments: [messageID, appID]
            ).map { row in
                TracedPush(
                    id: row[0], device: DeviceRef(appID: appID, deviceID: row[1]), reason: row[2], strategy: row[3],
                    pushType: row[4] ?? "", priority: row[5] ?? 0, collapseID: row[6], apnsID: row[7], messageCount: row[8],
                    createdAt: Date(millisecondsSince1970: row[9]), state: row[10], wake: row[11],
                    wakeLatency: (row[12] as Int64?).map { TimeInterval($0) / 1000 },
                    wakeAt: (row[13] as Int64?).map(Date.init(millisecondsSince1970:)))
            }
            for index in pushes.indices {
                pushes[index].attempts = try Row.fetchAll(
                    db,
                    sql: "SELECT attempt, at, outcome, status, reason, unique_id FROM push_attempt WHERE push_id = ? ORDER BY attempt",
                    arguments: [pushes[index].id]
                ).map { row in
                    PushAttempt(
                        number: row[0], at: Date(millisecondsSince1970: row[1]),
                        outcome: PushAttempt.Outcome(rawValue: row[2]) ?? .failed, status: row[3], reason: row[4], uniqueID: row[5])
                }
            }
            let receipts = try Row.fetchAll(
                db, sql: "SELECT device_id, kind, at FROM message_receipt WHERE message_id = ? AND app_id = ? ORDER BY at",
                arguments: [messageID, appID]
            ).compactMap { row in
                ReceiptKind(rawValue: row[1]).map { kind in
                    MessageReceipt(
                        device: DeviceRef(appID: appID, deviceID: row[0]), messageID: messageID, kind: kind,
                        at: Date(millisecondsSince1970: row[2]))
                }
            }
            let reads = try Row.fetchAll(
                db, sql: "SELECT user_id, device_id, read_at FROM message_read WHERE message_id = ? AND app_id = ? ORDER BY read_at",
                arguments: [messageID, appID]
            ).map { MessageTraceRecords.Read(userID: $0[0], deviceID: $0[1], at: Date(millisecondsSince1970: $0[2])) }
            return (positions, pushes, receipts, reads)
        }
        let devices = try await self.devices(of: positions.map { UserRef(appID: appID, userID: $0.userID) })
        return MessageTraceRecords(
            message: message, positions: positions, devices: devices.values.flatMap { $0 }.sorted { $0.id < $1.id },
            pushes: pushes, receipts: receipts, reads: reads)
    }

    @discardableResult
    public func recordReceipts(_ receipts: [MessageReceipt]) async throws -> Int {
        let receipts = receipts.distinctEarliest
        guard !receipts.isEmpty else { return 0 }
        return try await groupCommit.write { db in
            // Only for a message in the mailbox of the device's user: a device cannot write
            // another user's trace.
            let record = try db.cachedStatement(sql: """
                INSERT OR IGNORE INTO message_receipt (message_id, app_id, device_id, kind, at)
                SELECT mb.message_id, mb.app_id, d.id, ?, ? FROM device d
                JOIN mailbox mb ON mb.message_id = ? AND mb.app_id = d.app_id AND mb.user_id = d.user_id
                WHERE d.app_id = ? AND d.id = ?
                """)
            var recorded = 0
            for receipt in receipts {
                try record.execute(arguments: [
                    receipt.kind.rawValue, receipt.at.millisecondsSince1970, receipt.messageID, receipt.device.appID,
                    receipt.device.deviceID,
                ])
                recorded += db.changesCount
            }
            return recorded
        }
    }

    public func pruneTrace(before date: Date) async throws -> Int {
        let cutoff = date.millisecondsSince1970
        return try await groupCommit.write { db in
            var pruned = 0
            for (table, column) in [("push_message", "created_at"), ("push_attempt", "at"), ("message_receipt", "at")] {
                try db.execute(sql: "DELETE FROM \(table) WHERE \(column) < ?", arguments: [cutoff])
                pruned += db.changesCount
            }
            return pruned
        }
    }

    /// `synced` receipts for the messages an acknowledgement newly covers (at most
    /// `TraceLimits.syncedReceiptsPerAck`, the newest), but those expired by then: the sync
    /// skipped them, and the device never had them.
    static func recordSynced(_ db: Database, device: DeviceRef, user: String, after previous: Int64, upTo acked: Int64, at: Int64) throws {
        guard acked > previous else { return }
        try db.cachedStatement(sql: """
            INSERT OR IGNORE INTO message_receipt (message_id, app_id, device_id, kind, at)
            SELECT mb.message_id, mb.app_id, ?, 'synced', ? FROM mailbox mb JOIN message m ON m.id = mb.message_id
            WHERE mb.app_id = ? AND mb.user_id = ? AND mb.sequence > ? AND mb.sequence <= ?
              AND (m.expires_at IS NULL OR m.expires_at > ?)
            ORDER BY mb.sequence
            """).execute(arguments: [
                device.deviceID, at, device.appID, user, max(previous, acked - Int64(TraceLimits.syncedReceiptsPerAck)), acked, at,
            ])
    }
}
