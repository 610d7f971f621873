import APNSCore
import Foundation
import GRDB

extension SQLiteStore: MailboxStore {
    public func appendMessages(appID: String, _ messages: [NewMessage]) async throws -> [AppendedMessage] {
        guard !messages.isEmpty else { return [] }
        // Everything that does not need the database is prepared before taking the write lock,
        // which is the one thing all appends share.
        let prepared = try messages.map(PreparedMessage.init)
        let now = timestamp

        return try await groupCommit.write { db in
            try Self.requireApp(db, id: appID)
            var results: [AppendedMessage] = []
            results.reserveCapacity(prepared.count)
            for message in prepared {
                results.append(try Self.append(db, appID: appID, message, now: now))
            }
            return results
        }
    }

    public func messages(for user: UserRef, after sequence: Int64, limit: Int) async throws -> [MailboxEntry] {
        guard limit > 0 else { return [] }
        let now = timestamp
        return try await writer.read { db in
            try Row.fetchAll(
                db.cachedStatement(sql: """
                    SELECT mb.user_id, mb.sequence, \(Message.columns),
                           EXISTS (SELECT 1 FROM message_read r WHERE r.app_id = mb.app_id AND r.user_id = mb.user_id
                                   AND r.message_id = mb.message_id) AS is_read
                    FROM mailbox mb JOIN message m ON m.id = mb.message_id
                    WHERE mb.app_id = ? AND mb.user_id = ? AND mb.sequence > ?
                      AND (m.expires_at IS NULL OR m.expires_at > ?)
                    ORDER BY mb.sequence
                    LIMIT ?
                    """),
                arguments: [user.appID, user.userID, sequence, now, limit]
            ).map { row in
                MailboxEntry(
                    userID: row["user_id"], sequence: row["sequence"], message: try Message(row: row), read: row["is_read"])
            }
        }
    }

    public func mailboxEntry(for user: UserRef, messageID: String) async throws -> MailboxEntry? {
        try await writer.read { db in
            try Row.fetchOne(
                db,
                sql: """
                    SELECT mb.user_id, mb.sequence, \(Message.columns)
                    FROM mailbox mb JOIN message m ON m.id = mb.message_id
                    WHERE mb.message_id = ? AND mb.app_id = ? AND mb.user_id = ?
                    """,
                arguments: [messageID, user.appID, user.userID]
            ).map { row in
                MailboxEntry(userID: row["user_id"], sequence: row["sequence"], message: try Message(row: row))
            }
        }
    }

    public func message(appID: String, id: String) async throws -> Message? {
        try await writer.read { db in try Self.fetchMessage(db, appID: appID, id: id) }
    }

    public func lastSequence(of user: UserRef) async throws -> Int64 {
        try await writer.read { db in try Self.lastSequence(db, user) }
    }

    // MARK: Helpers

    static func lastSequence(_ db: Database, _ user: UserRef) throws -> Int64 {
        try Int64.fetchOne(
            db.cachedStatement(sql: "SELECT last_sequence FROM user_sequence WHERE app_id = ? AND user_id = ?"),
            arguments: [user.appID, user.userID]) ?? 0
    }

    static func fetchMessage(_ db: Database, appID: String, id: String) throws -> Message? {
        try Row.fetchOne(
            db, sql: "SELECT \(Message.columns) FROM message m WHERE m.id = ? AND m.app_id = ?", arguments: [id, appID]
        ).map(Message.init(row:))
    }

    private static func append(_ db: Database, appID: String, _ message: PreparedMessage, now: Int64) throws -> AppendedMessage {
        if let key = message.new.idempotencyKey,
           let existing = try Row.fetchOne(
               db.cachedStatement(sql: "SELECT id, fingerprint FROM message WHERE app_id = ? AND idempotency_key = ?"),
               arguments: [appID, key])
        {
            // A retry: answer what the first attempt stored, store nothing. The write lock makes
            // this check-then-insert atomic; the unique index would catch a race on PostgreSQL.
            guard SecretToken.constantTimeEquals(existing["fingerprint"], message.fingerprint) else {
                throw BeckonStoreError.idempotencyConflict(key: key)
            }
            let id: String = existing["id"]
            let positions = try Row.fetchAll(
                db.cachedStatement(sql: "SELECT user_id, sequence FROM mailbox WHERE message_id = ? ORDER BY user_id"),
                arguments: [id]
            ).map { MailboxPosition(userID: $0["user_id"], sequence: $0["sequence"]) }
            return AppendedMessage(message: try fetchMessage(db, appID: appID, id: id)!, positions: positions, isDuplicate: true)
        }

        // The id's time is the message's creation: a window's messages are a range of ids
        // (ShownShare+Query).
        let stored = Message(
            id: UUID.timeOrdered(at: Date(millisecondsSince1970: now)).lowercaseString, appID: appID, kind: message.new.kind, payload: message.new.payload,
            hints: message.new.hints, urgency: message.new.urgency,
            expiresAt: message.new.expiresAt?.truncatedToMilliseconds,
            idempotencyKey: message.new.idempotencyKey, createdAt: Date(millisecondsSince1970: now))
        try db.cachedStatement(sql: """
            INSERT INTO message (id, app_id, kind, payload, hints, urgency, expires_at, idempotency_key, fingerprint, created_at)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
            """
        ).execute(arguments: [
            stored.id, appID, stored.kind.rawValue, stored.payload, message.hintsJSON, stored.urgency.rawValue,
            stored.expiresAt?.millisecondsSince1970, stored.idempotencyKey, message.fingerprint, now,
        ])

        var positions: [MailboxPosition] = []
        positions.reserveCapacity(message.recipients.count)
        // Unread counting (see the v4 migration): a counter for messages that never expire.
        let counts = stored.kind.countsAsUnread
        let counterIncrement = counts && stored.expiresAt == nil ? 1 : 0
        for userID in message.recipients {
            // Inside the write transaction, so two appends can never be handed the same number,
            // and a rolled-back append hands back its numbers with the rest of its work.
            let sequence = try Int64.fetchOne(
                db.cachedStatement(sql: """
                    INSERT INTO user_sequence (app_id, user_id, last_sequence, unread) VALUES (?, ?, 1, ?)
                    ON CONFLICT (app_id, user_id) DO UPDATE SET last_sequence = last_sequence + 1,
                        unread = unread + excluded.unread
                    RETURNING last_sequence
                    """),
                arguments: [appID, userID, counterIncrement])!
            if counts, let expiresAt = stored.expiresAt {
                try db.cachedStatement(sql: """
                    INSERT INTO unread_expiring (app_id, user_id, message_id, expires_at) VALUES (?, ?, ?, ?)
                    """
                ).execute(arguments: [appID, userID, stored.id, expiresAt.millisecondsSince1970])
            }
            try db.cachedStatement(sql: "INSERT INTO mailbox (app_id, user_id, sequence, message_id) VALUES (?, ?, ?, ?)")
                .execute(arguments: [appID, userID, sequence, stored.id])
            positions.append(MailboxPosition(userID: userID, sequence: sequence))
        }
        return AppendedMessage(message: stored, positions: positions, isDuplicate: false)
    }
}
