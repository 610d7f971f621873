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
        var pushes: [TracedPush] = []
        for try await (id, deviceID, reason, strategy, pushType, priority, collapseID, apnsID, count, createdAt, state, wake, latency, wakeAt)
            in try await client.query(
                """
                SELECT o.id, o.device_id, o.reason, o.strategy, coalesce(o.push_type, ''), coalesce(o.priority, 0)::integer,
                       o.collapse_id, coalesce(o.apns_id, o.id), o.message_count::integer, o.created_at, o.state, o.wake,
                       o.wake_latency_ms, o.wake_at
                FROM push_message pm JOIN push_outbox o ON o.id = pm.push_id
                WHERE pm.message_id = \(messageID) AND o.app_id = \(appID) ORDER BY o.created_at, o.id
                """, logger: logger
            ).decode((String, String, String, String, String, Int, String?, String, Int, Int64, String, String?, Int64?, Int64?).self)
        {
            pushes.append(TracedPush(
                id: id, device: DeviceRef(appID: appID, deviceID: deviceID), reason: reason, strategy: strategy,
                pushType: pushType, priority: priority, collapseID: collapseID, apnsID: apnsID, messageCount: count,
                createdAt: Date(millisecondsSince1970: createdAt), state: state, wake: wake,
                wakeLatency: latency.map { TimeInterval($0) / 1000 }, wakeAt: wakeAt.map(Date.init(millisecondsSince1970:))))
        }
        var attempts: [String: [PushAttempt]] = [:]
        for try await (pushID, number, at, outcome, status, reason, uniqueID) in try await client.query(
            """
            SELECT push_id, attempt, at, outcome, status, reason, unique_id FROM push_attempt
            WHERE push_id = ANY(\(pushes.map(\.id))::text[]) ORDER BY push_id, attempt
            """, logger: logger
        ).decode((String, Int, Int64, String, Int, String?, String?).self) {
            attempts[pushID, default: []].append(PushAttempt(
                number: number, at: Date(millisecondsSince1970: at), outcome: PushAttempt.Outcome(rawValue: outcome) ?? .failed,
                status: status, reason: reason, uniqueID: uniqueID))
        }
        for index in pushes.indices { pushes[index].attempts = attempts[pushes[index].id] ?? [] }
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
        let devices = try await self.devices(of: positions.map { UserRef(appID: appID, userID: $0.userID) })
        return MessageTraceRecords(
            message: message, positions: positions, devices: devices.values.flatMap { $0 }.sorted { $0.id < $1.id },
            pushes: pushes, receipts: receipts, reads: reads)
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
        var pruned = 0
        for try await count in try await client.query(
            """
            WITH a AS (DELETE FROM push_message WHERE created_at < \(cutoff) RETURNING 1),
                 b AS (DELETE FROM push_attempt WHERE at < \(cutoff) RETURNING 1),
                 c AS (DELETE FROM message_receipt WHERE at < \(cutoff) RETURNING 1)
            SELECT ((SELECT count(*) FROM a) + (SELECT count(*) FROM b) + (SELECT count(*) FROM c))::integer
            """, logger: logger
        ).decode(Int.self) {
            pruned = count
        }
        return pruned
    }
}
