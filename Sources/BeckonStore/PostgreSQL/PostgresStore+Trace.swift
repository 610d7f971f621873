import BeckonProtocol
import Foundation
import PostgresNIO

extension PostgresStore: MessageTraceStore {
    public func traceRecords(appID: String, messageID: String) async throws -> MessageTraceRecords? {
        guard let message = try await message(appID: appID, id: messageID) else { return nil }
        var positions: [MailboxPosition] = []
        for try await (userID, sequence) in try await client.query(
            "SELECT user_id, sequence FROM mailbox WHERE message_id = \(messageID) AND app_id = \(appID)", logger: logger
        ).decode((String, Int64).self) {
            positions.append(MailboxPosition(userID: userID, sequence: sequence))
        }
        let devices = try await self.devices(of: positions.map { UserRef(appID: appID, userID: $0.userID) })
            .values.flatMap { $0 }.sorted { $0.id < $1.id }
        // A message's pushes are among its recipients' devices' (push_outbox_device), those whose
        // list holds it.
        var pushes: [TracedPush] = []
        for try await (id, deviceID, reason, strategy, pushType, priority, collapseID, apnsID, count, createdAt, state, wake, latency, wakeAt, log)
            in try await client.query(
                """
                SELECT o.id, o.device_id, o.reason, o.strategy, coalesce(o.push_type, ''), coalesce(o.priority, 0)::integer,
                       o.collapse_id, coalesce(o.apns_id, o.id), o.message_count::integer, o.created_at, o.state, o.wake,
                       o.wake_latency_ms, o.wake_at, o.attempt_log::text
                FROM push_outbox o
                WHERE o.app_id = \(appID) AND o.device_id = ANY(\(devices.map(\.id))::text[])
                  AND jsonb_exists(o.message_ids, \(messageID))
                ORDER BY o.created_at, o.id
                """, logger: logger
            ).decode((String, String, String, String, String, Int, String?, String, Int, Int64, String, String?, Int64?, Int64?, String?).self)
        {
            pushes.append(TracedPush(
                id: id, device: DeviceRef(appID: appID, deviceID: deviceID), reason: reason, strategy: strategy,
                pushType: pushType, priority: priority, collapseID: collapseID, apnsID: apnsID, messageCount: count,
                createdAt: Date(millisecondsSince1970: createdAt), state: state, attempts: try PushAttempt.log(log), wake: wake,
                wakeLatency: latency.map { TimeInterval($0) / 1000 }, wakeAt: wakeAt.map(Date.init(millisecondsSince1970:))))
        }
        var receipts: [MessageReceipt] = []
        for try await (deviceID, kind, at) in try await client.query(
            "SELECT device_id, kind, at FROM message_receipt WHERE message_id = \(messageID) AND app_id = \(appID) ORDER BY at",
            logger: logger
        ).decode((String, String, Int64).self) {
            guard let kind = ReceiptKind(rawValue: kind) else { continue }
            receipts.append(MessageReceipt(
                device: DeviceRef(appID: appID, deviceID: deviceID), messageID: messageID, kind: kind,
                at: Date(millisecondsSince1970: at)))
        }
        var reads: [MessageTraceRecords.Read] = []
        for try await (userID, deviceID, at) in try await client.query(
            "SELECT user_id, device_id, read_at FROM message_read WHERE message_id = \(messageID) AND app_id = \(appID) ORDER BY read_at",
            logger: logger
        ).decode((String, String, Int64).self) {
            reads.append(MessageTraceRecords.Read(userID: userID, deviceID: deviceID, at: Date(millisecondsSince1970: at)))
        }
        return MessageTraceRecords(
            message: message, positions: positions, devices: devices, pushes: pushes, receipts: receipts, reads: reads)
    }

    @discardableResult
    public func recordReceipts(_ receipts: [MessageReceipt]) async throws -> Int {
        let receipts = receipts.distinctEarliest
        guard !receipts.isEmpty else { return 0 }
        // Only for a message in the mailbox of the device's user: a device cannot write another
        // user's trace.
        var recorded = 0
        for try await _ in try await client.query(
            """
            INSERT INTO message_receipt (message_id, app_id, device_id, kind, at)
            SELECT mb.message_id, mb.app_id, d.id, r.kind, r.at
            FROM unnest(\(receipts.map(\.messageID))::text[], \(receipts.map(\.device.appID))::text[],
                        \(receipts.map(\.device.deviceID))::text[], \(receipts.map(\.kind.rawValue))::text[],
                        \(receipts.map(\.at.millisecondsSince1970))::bigint[]) AS r(message_id, app_id, device_id, kind, at)
            JOIN device d ON d.app_id = r.app_id AND d.id = r.device_id
            JOIN mailbox mb ON mb.message_id = r.message_id AND mb.app_id = d.app_id AND mb.user_id = d.user_id
            ON CONFLICT DO NOTHING
            RETURNING 1
            """, logger: logger
        ).decode(Int.self) {
            recorded += 1
        }
        return recorded
    }

    public func pruneTrace(before date: Date) async throws -> Int {
        let cutoff = date.millisecondsSince1970
        var apps: [String] = []
        for try await appID in try await client.query("SELECT id FROM app", logger: logger).decode(String.self) {
            apps.append(appID)
        }
        // Finished pushes (their messages and attempts with them), an app at a time by index and
        // a bounded chunk a statement, as SQLite does.
        var pruned = 0
        for appID in apps {
            while true {
                let deleted = try await count("""
                    WITH d AS (
                        DELETE FROM push_outbox WHERE id IN (
                            SELECT id FROM push_outbox WHERE app_id = \(appID) AND created_at < \(cutoff) AND state <> 'pending'
                            LIMIT \(TraceLimits.pruneChunk))
                        RETURNING 1)
                    SELECT count(*)::integer FROM d
                    """)
                pruned += deleted
                if deleted < TraceLimits.pruneChunk { break }
            }
        }
        while true {
            let deleted = try await count("""
                WITH d AS (
                    DELETE FROM message_receipt WHERE (message_id, app_id, device_id, kind) IN (
                        SELECT message_id, app_id, device_id, kind FROM message_receipt WHERE at < \(cutoff)
                        LIMIT \(TraceLimits.pruneChunk))
                    RETURNING 1)
                SELECT count(*)::integer FROM d
                """)
            pruned += deleted
            if deleted < TraceLimits.pruneChunk { return pruned }
        }
    }

    /// The one integer `query` answers.
    private func count(_ query: PostgresQuery) async throws -> Int {
        for try await count in try await client.query(query, logger: logger).decode(Int.self) { return count }
        return 0
    }
}
