import BeckonProtocol
import Foundation
import PostgresNIO

extension PostgresStore {
    /// Concurrent acks share transactions (PostgresGroupCommit, `PostgresAck`): a live session
    /// acks every frame, so one commit each would make every message cost a WAL flush.
    @discardableResult
    public func ack(device: DeviceRef, upTo sequence: Int64) async throws -> Int64 {
        try await acks.write(PostgresAck(device: device, sequence: sequence, now: timestamp))
    }

    public func cursor(device: DeviceRef) async throws -> Int64 {
        _ = try await Self.requireUser(client, of: device, logger: logger)
        for try await acked in try await client.query(
            "SELECT acked_sequence FROM device_cursor WHERE app_id = \(device.appID) AND device_id = \(device.deviceID)",
            logger: logger
        ).decode(Int64.self) {
            return acked
        }
        return 0
    }

    public func markRead(device: DeviceRef, messageIDs: [String]) async throws -> [String] {
        var seen = Set<String>()
        let ids = messageIDs.filter { seen.insert($0).inserted }
        guard !ids.isEmpty else { return [] }
        let now = timestamp
        return try await transaction { connection in
            let userID = try await Self.requireUser(connection, of: device, logger: logger)
            // The user's sequence row orders read marks across nodes: two devices reading one
            // message at once count it read once.
            try await connection.query(
                "SELECT 1 FROM user_sequence WHERE app_id = \(device.appID) AND user_id = \(userID) FOR UPDATE", logger: logger)
            var newlyRead: [String] = []
            for id in ids {
                // Only the device's own user's messages.
                var inMailbox = false
                var readBefore = false
                for try await (mailbox, read) in try await connection.query(
                    """
                    SELECT EXISTS (SELECT 1 FROM mailbox WHERE message_id = \(id) AND app_id = \(device.appID) AND user_id = \(userID)),
                           EXISTS (SELECT 1 FROM message_read WHERE app_id = \(device.appID) AND user_id = \(userID) AND message_id = \(id))
                    """, logger: logger
                ).decode((Bool, Bool).self) {
                    (inMailbox, readBefore) = (mailbox, read)
                }
                guard inMailbox else { continue }
                try await connection.query(
                    """
                    INSERT INTO message_read (app_id, user_id, message_id, device_id, read_at)
                    VALUES (\(device.appID), \(userID), \(id), \(device.deviceID), \(now)) ON CONFLICT DO NOTHING
                    """, logger: logger)
                if !readBefore {
                    newlyRead.append(id)
                    try await Self.countAsRead(connection, appID: device.appID, userID: userID, messageID: id, logger: logger)
                }
            }
            return newlyRead
        }
    }

    public func unreadCount(of user: UserRef) async throws -> Int {
        try await unreadCounts(of: [user])[user] ?? 0
    }

    /// The counter (messages without expiry) plus the unexpired rows of `unread_expiring`, for
    /// every user in one statement.
    public func unreadCounts(of users: [UserRef]) async throws -> [UserRef: Int] {
        guard !users.isEmpty else { return [:] }
        let now = timestamp
        var counts: [UserRef: Int] = [:]
        for try await (appID, userID, count) in try await client.query(
            """
            SELECT u.app_id, u.user_id, COALESCE(s.unread, 0)
                 + (SELECT count(*) FROM unread_expiring e
                    WHERE e.app_id = u.app_id AND e.user_id = u.user_id AND e.expires_at > \(now))::integer
            FROM unnest(\(users.map(\.appID))::text[], \(users.map(\.userID))::text[]) AS u(app_id, user_id)
            LEFT JOIN user_sequence s ON s.app_id = u.app_id AND s.user_id = u.user_id
            """, logger: logger
        ).decode((String, String, Int).self) {
            counts[UserRef(appID: appID, userID: userID)] = count
        }
        return counts
    }

    /// Everything a sync session's `welcome` needs.
    public func sessionStart(for user: UserRef, cursor: Int64, window: Int, callsEndedSince: Date) async throws -> SessionStart {
        let badge = try await unreadCount(of: user)
        let last = try await Self.lastSequence(client, user, logger: logger)
        let upTo = min(cursor, last)
        var read: [String] = []
        for try await id in try await client.query(
            """
            SELECT mb.message_id FROM mailbox mb
            WHERE mb.app_id = \(user.appID) AND mb.user_id = \(user.userID) AND mb.sequence <= \(upTo)
              AND mb.sequence > \(upTo - Int64(window))
              AND EXISTS (SELECT 1 FROM message_read r WHERE r.app_id = mb.app_id AND r.user_id = mb.user_id
                          AND r.message_id = mb.message_id)
            ORDER BY mb.sequence DESC
            """, logger: logger
        ).decode(String.self) {
            read.append(id)
        }
        var ended: [(callID: String, outcome: String)] = []
        for try await (callID, outcome) in try await client.query(
            """
            SELECT ce.call_id, ce.outcome FROM mailbox mb
            JOIN call_end ce ON ce.app_id = mb.app_id AND ce.call_id = mb.message_id
            WHERE mb.app_id = \(user.appID) AND mb.user_id = \(user.userID) AND mb.sequence > \(last - Int64(window))
              AND ce.ended_at >= \(callsEndedSince.millisecondsSince1970)
            ORDER BY mb.sequence
            """, logger: logger
        ).decode((String, String).self) {
            ended.append((callID, outcome))
        }
        return SessionStart(lastSequence: last, badge: badge, readUpToCursor: read, endedCalls: ended)
    }

    public func pruneExpiredUnread(now: Date) async throws -> Int {
        var pruned = 0
        for try await _ in try await client.query(
            "DELETE FROM unread_expiring WHERE expires_at <= \(now.millisecondsSince1970) RETURNING message_id", logger: logger)
        {
            pruned += 1
        }
        return pruned
    }

    // MARK: Helpers

    static func lastSequence(_ runner: some PostgresQueryRunner, _ user: UserRef, logger: Logger) async throws -> Int64 {
        for try await sequence in try await runner.run(
            "SELECT last_sequence FROM user_sequence WHERE app_id = \(user.appID) AND user_id = \(user.userID)", logger: logger
        ).decode(Int64.self) {
            return sequence
        }
        return 0
    }

    /// The device's user, or `deviceNotFound`.
    static func requireUser(_ runner: some PostgresQueryRunner, of device: DeviceRef, logger: Logger) async throws -> String {
        for try await userID in try await runner.run(
            "SELECT user_id FROM device WHERE app_id = \(device.appID) AND id = \(device.deviceID)", logger: logger
        ).decode(String.self) {
            return userID
        }
        throw BeckonStoreError.deviceNotFound(appID: device.appID, deviceID: device.deviceID)
    }

    /// A message became read for its user: it stops counting.
    private static func countAsRead(
        _ connection: PostgresConnection, appID: String, userID: String, messageID: String, logger: Logger
    ) async throws {
        for try await (kind, expiresAt) in try await connection.query(
            "SELECT kind, expires_at FROM message WHERE id = \(messageID)", logger: logger
        ).decode((String, Int64?).self) {
            guard let kind = MessageKind(rawValue: kind), kind.countsAsUnread else { return }
            if expiresAt == nil {
                try await connection.query(
                    "UPDATE user_sequence SET unread = GREATEST(unread - 1, 0) WHERE app_id = \(appID) AND user_id = \(userID)",
                    logger: logger)
            } else {
                try await connection.query(
                    "DELETE FROM unread_expiring WHERE app_id = \(appID) AND user_id = \(userID) AND message_id = \(messageID)",
                    logger: logger)
            }
        }
    }
}

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
        return batch.map { ack in
            stored[ack.device].map(Result.success)
                ?? .failure(BeckonStoreError.deviceNotFound(appID: ack.device.appID, deviceID: ack.device.deviceID))
        }
    }
}
