import APNSCore
import BeckonProtocol
import Foundation
import PostgresNIO

extension PostgresStore: MailboxStore {
    /// Concurrent calls share transactions (PostgresGroupCommit, `PostgresAppend`); each call
    /// still stores all of its messages or none, and fails alone.
    public func appendMessages(appID: String, _ messages: [NewMessage]) async throws -> [AppendedMessage] {
        guard !messages.isEmpty else { return [] }
        let prepared = try messages.map(PreparedMessage.init)
        return try await appends.write(PostgresAppend(appID: appID, messages: prepared, now: timestamp))
    }

    public func messages(for user: UserRef, after sequence: Int64, limit: Int) async throws -> [MailboxEntry] {
        guard limit > 0 else { return [] }
        let now = timestamp
        let rows = try await client.query(
            """
            SELECT mb.user_id, mb.sequence, \(unescaped: Message.columns),
                   EXISTS (SELECT 1 FROM message_read r WHERE r.app_id = mb.app_id AND r.user_id = mb.user_id
                           AND r.message_id = mb.message_id) AS is_read
            FROM mailbox mb JOIN message m ON m.id = mb.message_id
            WHERE mb.app_id = \(user.appID) AND mb.user_id = \(user.userID) AND mb.sequence > \(sequence)
              AND (m.expires_at IS NULL OR m.expires_at > \(now))
            ORDER BY mb.sequence
            LIMIT \(limit)
            """, logger: logger)
        var entries: [MailboxEntry] = []
        for try await row in rows {
            let columns = row.makeRandomAccess()
            entries.append(MailboxEntry(
                userID: try columns["user_id"].decode(String.self), sequence: try columns["sequence"].decode(Int64.self),
                message: try Message(postgres: columns), read: try columns["is_read"].decode(Bool.self)))
        }
        return entries
    }

    public func mailboxEntry(for user: UserRef, messageID: String) async throws -> MailboxEntry? {
        let rows = try await client.query(
            """
            SELECT mb.user_id, mb.sequence, \(unescaped: Message.columns)
            FROM mailbox mb JOIN message m ON m.id = mb.message_id
            WHERE mb.message_id = \(messageID) AND mb.app_id = \(user.appID) AND mb.user_id = \(user.userID)
            """, logger: logger)
        for try await row in rows {
            let columns = row.makeRandomAccess()
            return MailboxEntry(
                userID: try columns["user_id"].decode(String.self), sequence: try columns["sequence"].decode(Int64.self),
                message: try Message(postgres: columns))
        }
        return nil
    }

    public func message(appID: String, id: String) async throws -> Message? {
        try await Self.fetchMessage(client, appID: appID, id: id, logger: logger)
    }

    public func lastSequence(of user: UserRef) async throws -> Int64 {
        try await Self.lastSequence(client, user, logger: logger)
    }

    // MARK: Helpers

    static func fetchMessage(
        _ runner: some PostgresQueryRunner, appID: String, id: String, logger: Logger
    ) async throws -> Message? {
        for try await row in try await runner.run(
            "SELECT \(unescaped: Message.columns) FROM message m WHERE m.id = \(id) AND m.app_id = \(appID)", logger: logger)
        {
            return try Message(postgres: row.makeRandomAccess())
        }
        return nil
    }

    /// One statement, one round trip on the batch's connection: the message, each recipient's next
    /// sequence (the row is already locked by the batch), the unread bookkeeping and the mailbox
    /// rows. Nothing but the message is written if its idempotency key was stored before.
    static func append(
        _ connection: PostgresConnection, appID: String, _ message: PreparedMessage, now: Int64, logger: Logger
    ) async throws -> AppendedMessage {
        let id = UUID.timeOrdered(at: Date(millisecondsSince1970: now)).lowercaseString
        let expiresAt = message.new.expiresAt?.truncatedToMilliseconds
        let counts = message.new.kind.countsAsUnread
        // Unread counting as in the SQLite store: a counter for messages that never expire, a row
        // per user for those that do (they stop counting when they expire).
        let counterIncrement = counts && expiresAt == nil ? 1 : 0
        let expiring = counts && expiresAt != nil
        // The unique index on (app, idempotency key) decides a race between two nodes: the
        // second insert waits for the first to commit, then inserts nothing, and so does the rest.
        var sequences: [String: Int64] = [:]
        for try await (userID, sequence) in try await connection.query(
            """
            WITH inserted AS (
                INSERT INTO message (id, app_id, kind, payload, hints, urgency, expires_at, idempotency_key, fingerprint, created_at)
                VALUES (\(id), \(appID), \(message.new.kind.rawValue), \(message.new.payload), \(message.hintsJSON),
                        \(message.new.urgency.rawValue), \(expiresAt?.millisecondsSince1970), \(message.new.idempotencyKey),
                        \(message.fingerprint), \(now))
                ON CONFLICT (app_id, idempotency_key) WHERE idempotency_key IS NOT NULL DO NOTHING
                RETURNING id
            ), numbered AS (
                INSERT INTO user_sequence (app_id, user_id, last_sequence, unread, changed_at)
                SELECT \(appID), r.user_id, 1, \(counterIncrement), \(now)
                FROM unnest(\(message.recipients)::text[]) AS r(user_id) CROSS JOIN inserted
                ORDER BY r.user_id
                ON CONFLICT (app_id, user_id) DO UPDATE SET last_sequence = user_sequence.last_sequence + 1,
                    unread = user_sequence.unread + excluded.unread, changed_at = excluded.changed_at
                RETURNING user_id, last_sequence
            ), expiring AS (
                INSERT INTO unread_expiring (app_id, user_id, message_id, expires_at)
                SELECT \(appID), user_id, \(id), \(expiresAt?.millisecondsSince1970) FROM numbered WHERE \(expiring)
            ), boxed AS (
                INSERT INTO mailbox (app_id, user_id, sequence, message_id)
                SELECT \(appID), user_id, last_sequence, \(id) FROM numbered
            )
            SELECT user_id, last_sequence FROM numbered
            """, logger: logger
        ).decode((String, Int64).self) {
            sequences[userID] = sequence
        }
        guard !sequences.isEmpty else { return try await duplicate(connection, appID: appID, message, logger: logger) }

        let stored = Message(
            id: id, appID: appID, kind: message.new.kind, payload: message.new.payload, hints: message.new.hints,
            urgency: message.new.urgency, expiresAt: expiresAt, idempotencyKey: message.new.idempotencyKey,
            createdAt: Date(millisecondsSince1970: now))
        // Positions keep the order given.
        let positions = message.recipients.map { MailboxPosition(userID: $0, sequence: sequences[$0]!) }
        return AppendedMessage(message: stored, positions: positions, isDuplicate: false)
    }

    /// A retry of a stored message: answer what the first attempt stored, store nothing.
    static func duplicate(
        _ connection: PostgresConnection, appID: String, _ message: PreparedMessage, logger: Logger
    ) async throws -> AppendedMessage {
        let key = message.new.idempotencyKey!
        for try await (id, fingerprint) in try await connection.query(
            "SELECT id, fingerprint FROM message WHERE app_id = \(appID) AND idempotency_key = \(key)", logger: logger
        ).decode((String, Data).self) {
            guard SecretToken.constantTimeEquals(fingerprint, message.fingerprint) else {
                throw BeckonStoreError.idempotencyConflict(key: key)
            }
            var positions: [MailboxPosition] = []
            for try await (userID, sequence) in try await connection.query(
                "SELECT user_id, sequence FROM mailbox WHERE message_id = \(id) ORDER BY user_id", logger: logger
            ).decode((String, Int64).self) {
                positions.append(MailboxPosition(userID: userID, sequence: sequence))
            }
            let stored = try await fetchMessage(connection, appID: appID, id: id, logger: logger)!
            return AppendedMessage(message: stored, positions: positions, isDuplicate: true)
        }
        throw BeckonStoreError.idempotencyConflict(key: key)
    }

    static func lastSequence(_ runner: some PostgresQueryRunner, _ user: UserRef, logger: Logger) async throws -> Int64 {
        for try await sequence in try await runner.run(
            "SELECT last_sequence FROM user_sequence WHERE app_id = \(user.appID) AND user_id = \(user.userID)", logger: logger
        ).decode(Int64.self) {
            return sequence
        }
        return 0
    }
}
