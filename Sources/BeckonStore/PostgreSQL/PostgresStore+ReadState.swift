import BeckonProtocol
import Foundation
import PostgresNIO

extension PostgresStore: ReadStateStore {
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
