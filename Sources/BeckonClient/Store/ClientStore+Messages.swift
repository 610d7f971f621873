import BeckonJSON
import BeckonProtocol
import Foundation
import GRDB

extension ClientStore {
    /// Stores a message that arrived over sync and moves the cursor to it, in one transaction:
    /// the ack that follows is then true (design rule 9). A message already stored (a resend
    /// after a reconnect, or one the extension fetched) is not stored twice: its read state can
    /// only move from unread to read.
    package func storeSynced(_ message: SyncMessage, as writer: LeaseGuard) throws -> StoreOutcome {
        let now = nowMilliseconds
        return try write(as: writer) { db in
            let wasRead = try Bool.fetchOne(db, sql: "SELECT isRead FROM message WHERE id = ?", arguments: [message.id])
            if let wasRead {
                try db.execute(
                    sql: "UPDATE message SET sequence = ?, synced = 1, isRead = ? WHERE id = ?",
                    arguments: [message.sequence, wasRead || message.read, message.id])
            } else {
                try db.execute(
                    sql: """
                        INSERT INTO message (id, sequence, kind, payload, createdAt, expiresAt, isRead, synced, storedAt)
                        VALUES (?, ?, ?, ?, ?, ?, ?, 1, ?)
                        """,
                    arguments: [
                        message.id, message.sequence, message.kind.rawValue, Data(message.payload),
                        message.createdAt.milliseconds, message.expiresAt?.milliseconds, message.read, now,
                    ])
            }
            try db.execute(sql: "UPDATE syncState SET cursor = MAX(cursor, ?) WHERE id = 1", arguments: [message.sequence])
            return StoreOutcome(isNew: wasRead == nil, isRead: (wasRead ?? false) || message.read)
        }
    }

    /// Stores a message the extension fetched by id. The cursor does not move: only sync,
    /// which delivers in order, moves it. Returns whether it was new.
    @discardableResult
    package func storeFetched(_ message: FetchedMessage, as writer: LeaseGuard) throws -> Bool {
        let now = nowMilliseconds
        return try write(as: writer) { db in
            try db.execute(
                sql: """
                    INSERT INTO message (id, sequence, kind, payload, createdAt, expiresAt, isRead, synced, storedAt)
                    VALUES (?, ?, ?, ?, ?, NULL, 0, 0, ?) ON CONFLICT (id) DO NOTHING
                    """,
                arguments: [message.id, message.sequence, message.kind.rawValue, Data(message.payloadJSONBytes ?? []), now, now])
            return db.changesCount > 0
        }
    }

    /// Marks messages read. `locally`: the user read them on this device, so they are also kept
    /// as pending read markers until a `read` frame carried them to the server. Returns the ids
    /// that were stored and unread before.
    @discardableResult
    package func markRead(_ ids: [String], locally: Bool, as writer: LeaseGuard) throws -> [String] {
        guard !ids.isEmpty else { return [] }
        let now = nowMilliseconds
        return try write(as: writer) { db in
            var newlyRead: [String] = []
            for id in ids {
                try db.execute(sql: "UPDATE message SET isRead = 1 WHERE id = ? AND isRead = 0", arguments: [id])
                if db.changesCount > 0 { newlyRead.append(id) }
                if locally {
                    try db.execute(
                        sql: "INSERT INTO pendingRead (messageId, markedAt) VALUES (?, ?) ON CONFLICT DO NOTHING",
                        arguments: [id, now])
                }
            }
            return newlyRead
        }
    }

    /// Read markers not yet sent, oldest first.
    public func pendingReads(limit: Int = SyncProtocol.maximumReadIDs) throws -> [String] {
        try read { db in
            try String.fetchAll(db, sql: "SELECT messageId FROM pendingRead ORDER BY markedAt, messageId LIMIT ?", arguments: [limit])
        }
    }

    package func removePendingReads(_ ids: [String], as writer: LeaseGuard) throws {
        guard !ids.isEmpty else { return }
        try write(as: writer) { db in
            for id in ids { try db.execute(sql: "DELETE FROM pendingRead WHERE messageId = ?", arguments: [id]) }
        }
    }

    /// The last sequence stored in order: what `hello` resumes from.
    public func cursor() throws -> Int64 {
        try read { db in try Int64.fetchOne(db, sql: "SELECT cursor FROM syncState WHERE id = 1") ?? 0 }
    }

    /// The user's unread count as the server last told it, adjusted for what arrived since.
    public func badge() throws -> Int {
        try read { db in try Int.fetchOne(db, sql: "SELECT badge FROM syncState WHERE id = 1") ?? 0 }
    }

    package func setBadge(_ badge: Int, as writer: LeaseGuard) throws {
        try write(as: writer) { db in
            try db.execute(sql: "UPDATE syncState SET badge = ? WHERE id = 1", arguments: [max(0, badge)])
        }
    }

    /// One stored message; nil when the device does not have it (or pruned it).
    public func message(id: String) throws -> StoredMessage? {
        try read { db in
            try Row.fetchOne(db, sql: "SELECT * FROM message WHERE id = ?", arguments: [id]).map(Self.message)
        }
    }

    /// Every stored message in sequence order.
    public func messages() throws -> [StoredMessage] {
        try read { db in try Row.fetchAll(db, sql: "SELECT * FROM message ORDER BY sequence").map(Self.message) }
    }

    private static func message(_ row: Row) -> StoredMessage {
        let payload: Data = row["payload"]
        let expiresAt: Int64? = row["expiresAt"]
        return StoredMessage(
            id: row["id"], sequence: row["sequence"], kind: MessageKind(rawValue: row["kind"]) ?? .custom,
            payload: Array(payload), createdAt: Date(milliseconds: row["createdAt"]),
            expiresAt: expiresAt.map(Date.init(milliseconds:)), isRead: row["isRead"], synced: row["synced"])
    }
}
