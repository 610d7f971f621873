import BeckonProtocol
import Foundation
import GRDB

extension SQLiteStore: ReadStateStore {
    @discardableResult
    public func ack(device: DeviceRef, upTo sequence: Int64) async throws -> Int64 {
        let now = timestamp
        return try await groupCommit.write { db in
            let userID = try Self.requireUser(db, of: device)
            // Never past the last sequence handed out: a client that acks a number it cannot
            // have seen would otherwise skip messages appended later.
            let last = try Self.lastSequence(db, UserRef(appID: device.appID, userID: userID))
            let target = max(0, min(sequence, last))
            let previous = try Int64.fetchOne(
                db.cachedStatement(sql: "SELECT acked_sequence FROM device_cursor WHERE app_id = ? AND device_id = ?"),
                arguments: [device.appID, device.deviceID]) ?? 0
            // max(): acks arrive late and out of order (a replaced session's last frames), and a
            // cumulative cursor only moves forward. (PostgreSQL spells it GREATEST.)
            let acked = try Int64.fetchOne(
                db.cachedStatement(sql: """
                    INSERT INTO device_cursor (app_id, device_id, acked_sequence, updated_at) VALUES (?, ?, ?, ?)
                    ON CONFLICT (app_id, device_id) DO UPDATE SET
                        acked_sequence = max(acked_sequence, excluded.acked_sequence),
                        updated_at = excluded.updated_at
                    RETURNING acked_sequence
                    """),
                arguments: [device.appID, device.deviceID, target, now])!
            try Self.recordSynced(db, device: device, user: userID, after: previous, upTo: acked, at: now)
            return acked
        }
    }

    public func cursor(device: DeviceRef) async throws -> Int64 {
        try await writer.read { db in
            _ = try Self.requireUser(db, of: device)
            return try Int64.fetchOne(
                db.cachedStatement(sql: "SELECT acked_sequence FROM device_cursor WHERE app_id = ? AND device_id = ?"),
                arguments: [device.appID, device.deviceID]) ?? 0
        }
    }

    public func markRead(device: DeviceRef, messageIDs: [String]) async throws -> [String] {
        var seen = Set<String>()
        let ids = messageIDs.filter { seen.insert($0).inserted }
        guard !ids.isEmpty else { return [] }
        let now = timestamp
        return try await groupCommit.write { db in
            let userID = try Self.requireUser(db, of: device)
            var newlyRead: [String] = []
            for id in ids {
                // Only the device's own user's messages: a device cannot mark, or learn about,
                // anyone else's.
                let inMailbox = try Bool.fetchOne(
                    db.cachedStatement(sql: """
                        SELECT EXISTS (SELECT 1 FROM mailbox WHERE message_id = ? AND app_id = ? AND user_id = ?)
                        """),
                    arguments: [id, device.appID, userID]) ?? false
                guard inMailbox else { continue }
                let readBefore = try Bool.fetchOne(
                    db.cachedStatement(sql: """
                        SELECT EXISTS (SELECT 1 FROM message_read WHERE app_id = ? AND user_id = ? AND message_id = ?)
                        """),
                    arguments: [device.appID, userID, id]) ?? false
                try db.cachedStatement(sql: """
                    INSERT INTO message_read (app_id, user_id, message_id, device_id, read_at) VALUES (?, ?, ?, ?, ?)
                    ON CONFLICT DO NOTHING
                    """
                ).execute(arguments: [device.appID, userID, id, device.deviceID, now])
                if !readBefore {
                    newlyRead.append(id)
                    try Self.countAsRead(db, appID: device.appID, userID: userID, messageID: id)
                }
            }
            return newlyRead
        }
    }

    public func unreadCount(of user: UserRef) async throws -> Int {
        try await unreadCounts(of: [user])[user] ?? 0
    }

    /// The counter (messages without expiry) plus the unexpired rows of `unread_expiring`: index
    /// lookups whatever the size of the mailbox, by key lists (`forEachRow`), as a planning step
    /// asks for every user of its batch at once.
    public func unreadCounts(of users: [UserRef]) async throws -> [UserRef: Int] {
        guard !users.isEmpty else { return [:] }
        let now = timestamp
        return try await writer.read { db in
            var counts = Dictionary(users.map { ($0, 0) }, uniquingKeysWith: { first, _ in first })
            let keys = users.lazy.map { (appID: $0.appID, key: $0.userID) }
            try Self.forEachRow(db, select: "SELECT app_id, user_id, unread FROM user_sequence WHERE app_id = ? AND user_id IN", keys: keys) { row in
                counts[UserRef(appID: row[0], userID: row[1]), default: 0] += row[2] as Int
            }
            // Rows past their expiry wait for `pruneExpiredUnread`; they are not counted.
            try Self.forEachRow(
                db, select: "SELECT app_id, user_id, expires_at FROM unread_expiring WHERE app_id = ? AND user_id IN", keys: keys
            ) { row in
                if row[2] as Int64 > now { counts[UserRef(appID: row[0], userID: row[1]), default: 0] += 1 }
            }
            return counts
        }
    }

    /// Everything a sync session's `welcome` needs, in two trips to the reader instead of four
    /// (a session start is the hot path of a reconnect storm).
    public func sessionStart(for user: UserRef, cursor: Int64, window: Int, callsEndedSince: Date) async throws -> SessionStart {
        let badge = try await unreadCount(of: user)
        return try await writer.read { db in
            let last = try Self.lastSequence(db, user)
            let read = try String.fetchAll(
                db.cachedStatement(sql: """
                    SELECT mb.message_id FROM mailbox mb
                    WHERE mb.app_id = ? AND mb.user_id = ? AND mb.sequence <= ? AND mb.sequence > ?
                      AND EXISTS (SELECT 1 FROM message_read r WHERE r.app_id = mb.app_id AND r.user_id = mb.user_id
                                  AND r.message_id = mb.message_id)
                    ORDER BY mb.sequence DESC
                    """),
                arguments: [user.appID, user.userID, min(cursor, last), min(cursor, last) - Int64(window)])
            let ended = try Row.fetchAll(
                db.cachedStatement(sql: """
                    SELECT ce.call_id, ce.outcome FROM mailbox mb
                    JOIN call_end ce ON ce.app_id = mb.app_id AND ce.call_id = mb.message_id
                    WHERE mb.app_id = ? AND mb.user_id = ? AND mb.sequence > ? AND ce.ended_at >= ?
                    ORDER BY mb.sequence
                    """),
                arguments: [user.appID, user.userID, last - Int64(window), callsEndedSince.millisecondsSince1970]
            ).map { (callID: $0["call_id"] as String, outcome: $0["outcome"] as String) }
            return SessionStart(lastSequence: last, badge: badge, readUpToCursor: read, endedCalls: ended)
        }
    }

    public func pruneExpiredUnread(now: Date) async throws -> Int {
        try await writer.write { db in
            try db.execute(sql: "DELETE FROM unread_expiring WHERE expires_at <= ?", arguments: [now.millisecondsSince1970])
            return db.changesCount
        }
    }

    /// A message became read for its user: it stops counting (see the v4 migration).
    private static func countAsRead(_ db: Database, appID: String, userID: String, messageID: String) throws {
        guard let row = try Row.fetchOne(
            db.cachedStatement(sql: "SELECT kind, expires_at FROM message WHERE id = ?"), arguments: [messageID]),
            let kind = MessageKind(rawValue: row["kind"]), kind.countsAsUnread
        else { return }
        if (row["expires_at"] as Int64?) == nil {
            try db.cachedStatement(sql: """
                UPDATE user_sequence SET unread = max(unread - 1, 0) WHERE app_id = ? AND user_id = ?
                """
            ).execute(arguments: [appID, userID])
        } else {
            try db.cachedStatement(sql: "DELETE FROM unread_expiring WHERE app_id = ? AND user_id = ? AND message_id = ?")
                .execute(arguments: [appID, userID, messageID])
        }
    }
}
