import Logging
import PostgresNIO

/// One `ack` call, as `PostgresGroupCommit` batches it. Acks take no sequence row: they only
/// read the user's last sequence.
struct PostgresAck: PostgresBatchedWrite {
    var device: DeviceRef
    var sequence: Int64
    var now: Int64

    var users: [UserRef] { [] }

    func run(on connection: PostgresConnection, logger: Logger) async throws -> Int64 {
        guard let acked = try await Self.runAll([self], on: connection, logger: logger)?.first else {
            throw BeckonStoreError.deviceNotFound(appID: device.appID, deviceID: device.deviceID)
        }
        return try acked.get()
    }

    /// The whole batch in one statement: each device's cursor moved to its highest ack, never
    /// past the last sequence handed out (a client acking a number it cannot have seen would
    /// skip messages appended later), and only forward (GREATEST: acks arrive late and out of
    /// order). Rows are written in (app, device) order, so two nodes' batches cannot deadlock.
    static func runAll(
        _ batch: [PostgresAck], on connection: PostgresConnection, logger: Logger
    ) async throws -> [Result<Int64, any Error>]? {
        // One row per device (an upsert cannot touch a row twice): the highest ack wins.
        var highest: [DeviceRef: PostgresAck] = [:]
        for ack in batch where highest[ack.device].map({ $0.sequence < ack.sequence }) ?? true {
            highest[ack.device] = ack
        }
        let acks = Array(highest.values)
        // The cursors before, for the `synced` receipts of what the acks newly cover.
        var previous: [DeviceRef: Int64] = [:]
        for try await (appID, deviceID, acked) in try await connection.query(
            """
            SELECT c.app_id, c.device_id, c.acked_sequence FROM device_cursor c
            JOIN unnest(\(acks.map(\.device.appID))::text[], \(acks.map(\.device.deviceID))::text[]) AS a(app_id, device_id)
              ON c.app_id = a.app_id AND c.device_id = a.device_id
            """, logger: logger
        ).decode((String, String, Int64).self) {
            previous[DeviceRef(appID: appID, deviceID: deviceID)] = acked
        }
        var stored: [DeviceRef: Int64] = [:]
        for try await (appID, deviceID, acked) in try await connection.query(
            """
            INSERT INTO device_cursor (app_id, device_id, acked_sequence, updated_at)
            SELECT a.app_id, a.device_id, GREATEST(0, LEAST(a.sequence, COALESCE(s.last_sequence, 0))), a.now
            FROM unnest(\(acks.map(\.device.appID))::text[], \(acks.map(\.device.deviceID))::text[],
                        \(acks.map(\.sequence))::bigint[], \(acks.map(\.now))::bigint[]) AS a(app_id, device_id, sequence, now)
            JOIN device d ON d.app_id = a.app_id AND d.id = a.device_id
            LEFT JOIN user_sequence s ON s.app_id = d.app_id AND s.user_id = d.user_id
            ORDER BY a.app_id, a.device_id
            ON CONFLICT (app_id, device_id) DO UPDATE SET
                acked_sequence = GREATEST(device_cursor.acked_sequence, excluded.acked_sequence),
                updated_at = excluded.updated_at
            RETURNING app_id, device_id, acked_sequence
            """, logger: logger
        ).decode((String, String, Int64).self) {
            stored[DeviceRef(appID: appID, deviceID: deviceID)] = acked
        }
        try await recordSynced(acks, from: previous, to: stored, on: connection, logger: logger)
        return batch.map { ack in
            stored[ack.device].map(Result.success)
                ?? .failure(BeckonStoreError.deviceNotFound(appID: ack.device.appID, deviceID: ack.device.deviceID))
        }
    }

    /// `synced` receipts for the messages each ack newly covers (at most
    /// `TraceLimits.syncedReceiptsPerAck`, the newest), but those expired by then: the sync
    /// skipped them.
    private static func recordSynced(
        _ acks: [PostgresAck], from previous: [DeviceRef: Int64], to stored: [DeviceRef: Int64],
        on connection: PostgresConnection, logger: Logger
    ) async throws {
        let moved = acks.compactMap { ack -> (ack: PostgresAck, after: Int64, upTo: Int64)? in
            guard let upTo = stored[ack.device] else { return nil }
            let after = max(previous[ack.device] ?? 0, upTo - Int64(TraceLimits.syncedReceiptsPerAck))
            return upTo > after ? (ack, after, upTo) : nil
        }
        guard !moved.isEmpty else { return }
        try await connection.query(
            """
            INSERT INTO message_receipt (message_id, app_id, device_id, kind, at)
            SELECT mb.message_id, mb.app_id, a.device_id, 'synced', a.now
            FROM unnest(\(moved.map(\.ack.device.appID))::text[], \(moved.map(\.ack.device.deviceID))::text[],
                        \(moved.map(\.after))::bigint[], \(moved.map(\.upTo))::bigint[], \(moved.map(\.ack.now))::bigint[])
                 AS a(app_id, device_id, after, up_to, now)
            JOIN device d ON d.app_id = a.app_id AND d.id = a.device_id
            JOIN mailbox mb ON mb.app_id = d.app_id AND mb.user_id = d.user_id AND mb.sequence > a.after AND mb.sequence <= a.up_to
            JOIN message m ON m.id = mb.message_id
            WHERE m.expires_at IS NULL OR m.expires_at > a.now
            ORDER BY a.device_id, mb.sequence
            ON CONFLICT DO NOTHING
            """, logger: logger)
    }
}
