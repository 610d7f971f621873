import Foundation
import GRDB

extension SQLiteStore {
    @discardableResult
    public func ack(device: DeviceRef, upTo sequence: Int64) async throws -> Int64 {
        let now = timestamp
        return try await groupCommit.write { db in
            let userID = try Self.requireUser(db, of: device)
            // Never past the last sequence handed out: a client that acks a number it cannot
            // have seen would otherwise skip messages appended later.
            let last = try Self.lastSequence(db, UserRef(appID: device.appID, userID: userID))
            let target = max(0, min(sequence, last))
            // max(): acks arrive late and out of order (a replaced session's last frames), and a
            // cumulative cursor only moves forward. (PostgreSQL spells it GREATEST.)
            return try Int64.fetchOne(
                db.cachedStatement(sql: """
                    INSERT INTO device_cursor (app_id, device_id, acked_sequence, updated_at) VALUES (?, ?, ?, ?)
                    ON CONFLICT (app_id, device_id) DO UPDATE SET
                        acked_sequence = max(acked_sequence, excluded.acked_sequence),
                        updated_at = excluded.updated_at
                    RETURNING acked_sequence
                    """),
                arguments: [device.appID, device.deviceID, target, now])!
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
                if !readBefore { newlyRead.append(id) }
            }
            return newlyRead
        }
    }

    public func unreadCount(of user: UserRef) async throws -> Int {
        try await unreadCounts(of: [user])[user] ?? 0
    }

    public func unreadCounts(of users: [UserRef]) async throws -> [UserRef: Int] {
        let now = timestamp
        return try await writer.read { db in
            let statement = try db.cachedStatement(sql: Self.unreadCountSQL)
            var counts: [UserRef: Int] = [:]
            for user in users {
                counts[user] = try Int.fetchOne(statement, arguments: [user.appID, user.userID, now]) ?? 0
            }
            return counts
        }
    }

    private static let unreadCountSQL: String = {
        let counted = MessageKind.allCases.filter(\.countsAsUnread).map { "'\($0.rawValue)'" }.joined(separator: ", ")
        return """
            SELECT count(*) FROM mailbox mb JOIN message m ON m.id = mb.message_id
            WHERE mb.app_id = ? AND mb.user_id = ? AND m.kind IN (\(counted))
              AND (m.expires_at IS NULL OR m.expires_at > ?)
              AND NOT EXISTS (
                  SELECT 1 FROM message_read r
                  WHERE r.app_id = mb.app_id AND r.user_id = mb.user_id AND r.message_id = mb.message_id)
            """
    }()
}
