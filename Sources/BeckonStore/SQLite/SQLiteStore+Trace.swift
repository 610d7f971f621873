import BeckonProtocol
import Foundation
import GRDB

extension SQLiteStore: MessageTraceStore {
    public func traceRecords(appID: String, messageID: String) async throws -> MessageTraceRecords? {
        guard let message = try await message(appID: appID, id: messageID) else { return nil }
        let positions = try await writer.read { db in
            try Row.fetchAll(
                db, sql: "SELECT user_id, sequence FROM mailbox WHERE message_id = ? AND app_id = ?",
                arguments: [messageID, appID]
            ).map { MailboxPosition(userID: $0[0], sequence: $0[1]) }
        }
        let devices = try await self.devices(of: positions.map { UserRef(appID: appID, userID: $0.userID) })
            .values.flatMap { $0 }.sorted { $0.id < $1.id }
        let (pushes, receipts, reads) = try await writer.read { db in
            let findPushes = try db.cachedStatement(sql: Self.tracedPushes)
            var pushes: [TracedPush] = []
            for device in devices {
                pushes += try Row.fetchAll(findPushes, arguments: [appID, device.id, messageID]).map { row in
                    TracedPush(
                        id: row[0], device: DeviceRef(appID: appID, deviceID: row[1]), reason: row[2], strategy: row[3],
                        pushType: row[4] ?? "", priority: row[5] ?? 0, collapseID: row[6], apnsID: row[7], messageCount: row[8],
                        createdAt: Date(millisecondsSince1970: row[9]), state: row[10],
                        attempts: try PushAttempt.log(row[14]), wake: row[11],
                        wakeLatency: (row[12] as Int64?).map { TimeInterval($0) / 1000 },
                        wakeAt: (row[13] as Int64?).map(Date.init(millisecondsSince1970:)))
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
            return (pushes.sorted { ($0.createdAt, $0.id) < ($1.createdAt, $1.id) }, receipts, reads)
        }
        return MessageTraceRecords(
            message: message, positions: positions, devices: devices, pushes: pushes, receipts: receipts, reads: reads)
    }

    /// A device's pushes that stood for a message (app, device, message id): a message's pushes
    /// are found among its recipients' devices' (push_outbox_device), as those whose list holds it.
    static let tracedPushes = """
        SELECT o.id, o.device_id, o.reason, o.strategy, o.push_type, o.priority, o.collapse_id,
               coalesce(o.apns_id, o.id), o.message_count, o.created_at, o.state, o.wake, o.wake_latency_ms,
               o.wake_at, o.attempt_log
        FROM push_outbox o
        WHERE o.app_id = ? AND o.device_id = ? AND EXISTS (SELECT 1 FROM json_each(o.message_ids) WHERE value = ?)
        """

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
        let apps = try await writer.read { db in try String.fetchAll(db, sql: "SELECT id FROM app") }
        var pruned = 0
        // Finished pushes (their messages and attempts with them), an app at a time by index and
        // a bounded chunk a write: a week of a busy app's pushes must not hold the writer at once.
        for appID in apps {
            while true {
                let deleted = try await groupCommit.write { db in
                    try db.cachedStatement(sql: """
                        DELETE FROM push_outbox WHERE rowid IN (
                            SELECT rowid FROM push_outbox WHERE app_id = ? AND created_at < ? AND state != 'pending' LIMIT ?)
                        """).execute(arguments: [appID, cutoff, TraceLimits.pruneChunk])
                    return db.changesCount
                }
                pruned += deleted
                if deleted < TraceLimits.pruneChunk { break }
            }
        }
        while true {
            let deleted = try await groupCommit.write { db in
                try db.cachedStatement(sql: """
                    DELETE FROM message_receipt WHERE (message_id, app_id, device_id, kind) IN (
                        SELECT message_id, app_id, device_id, kind FROM message_receipt WHERE at < ? LIMIT ?)
                    """).execute(arguments: [cutoff, TraceLimits.pruneChunk])
                return db.changesCount
            }
            pruned += deleted
            if deleted < TraceLimits.pruneChunk { return pruned }
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
