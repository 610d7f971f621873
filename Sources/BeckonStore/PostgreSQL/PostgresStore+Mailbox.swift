import APNSCore
import BeckonProtocol
import Foundation
import PostgresNIO

extension PostgresStore {
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
        let id = UUID.timeOrdered().lowercaseString
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
}

/// One `appendMessages` call, as `PostgresGroupCommit` batches it.
struct PostgresAppend: PostgresBatchedWrite {
    var appID: String
    var messages: [PreparedMessage]
    var now: Int64

    var users: [UserRef] {
        var seen = Set<String>()
        return messages.flatMap(\.recipients).filter { seen.insert($0).inserted }.map { UserRef(appID: appID, userID: $0) }
    }

    /// One statement per message (`PostgresStore.append`).
    func run(on connection: PostgresConnection, logger: Logger) async throws -> [AppendedMessage] {
        var exists = false
        for try await _ in try await connection.query("SELECT 1 FROM app WHERE id = \(appID)", logger: logger) {
            exists = true
        }
        guard exists else { throw BeckonStoreError.appNotFound(appID) }
        var results: [AppendedMessage] = []
        results.reserveCapacity(messages.count)
        for message in messages {
            results.append(try await PostgresStore.append(connection, appID: appID, message, now: now, logger: logger))
        }
        return results
    }

    /// The whole batch in two statements. First which apps exist and which idempotency keys are
    /// stored already; then each call is decided in order, as one call at a time would be (a key
    /// stored by an earlier call of the batch counts as stored), so a call that must fail is left
    /// out before anything is written; then every new message at once.
    static func runAll(
        _ batch: [PostgresAppend], on connection: PostgresConnection, logger: Logger
    ) async throws -> [Result<[AppendedMessage], any Error>]? {
        let (apps, known) = try await lookUp(batch, on: connection, logger: logger)
        var stored = known
        var fresh = FreshMessages()
        var plans: [Result<[Plan], any Error>] = []
        for call in batch {
            guard apps.contains(call.appID) else {
                plans.append(.failure(BeckonStoreError.appNotFound(call.appID)))
                continue
            }
            var keys: [KeyRef: Data] = [:]
            var plan: [Plan] = []
            var conflict: String?
            let start = fresh.count
            for message in call.messages {
                if let key = message.new.idempotencyKey {
                    let ref = KeyRef(appID: call.appID, key: key)
                    if let fingerprint = keys[ref] ?? stored[ref] {
                        guard SecretToken.constantTimeEquals(fingerprint, message.fingerprint) else {
                            conflict = key
                            break
                        }
                        plan.append(.duplicate)
                        continue
                    }
                    keys[ref] = message.fingerprint
                }
                plan.append(.new(fresh.count))
                fresh.append(message, appID: call.appID, now: call.now)
            }
            if let conflict {
                fresh.removeLast(fresh.count - start)
                plans.append(.failure(BeckonStoreError.idempotencyConflict(key: conflict)))
            } else {
                stored.merge(keys) { $1 }
                plans.append(.success(plan))
            }
        }

        let sequences = try await fresh.insert(on: connection, logger: logger)
        for (index, message) in fresh.messages.enumerated() where sequences[index].count != message.recipients.count {
            // Another node stored one of these keys after the first statement read them.
            return nil
        }

        var outcomes: [Result<[AppendedMessage], any Error>] = []
        for (call, plan) in zip(batch, plans) {
            guard case .success(let plan) = plan else {
                outcomes.append(plan.map { _ in [] })
                continue
            }
            var results: [AppendedMessage] = []
            for (message, step) in zip(call.messages, plan) {
                switch step {
                case .new(let index):
                    results.append(fresh.appended(index, sequences: sequences[index]))
                case .duplicate:
                    results.append(try await PostgresStore.duplicate(connection, appID: call.appID, message, logger: logger))
                }
            }
            outcomes.append(.success(results))
        }
        return outcomes
    }

    private enum Plan {
        /// Stored by this batch: the index among its new messages.
        case new(Int)
        /// Stored before, by an earlier call of the batch or earlier still: answered as stored.
        case duplicate
    }

    private struct KeyRef: Hashable {
        var appID: String
        var key: String
    }

    /// The apps of the batch that exist, and its idempotency keys that are stored, with the
    /// stored message's fingerprint: one round trip.
    private static func lookUp(
        _ batch: [PostgresAppend], on connection: PostgresConnection, logger: Logger
    ) async throws -> (apps: Set<String>, keys: [KeyRef: Data]) {
        let keyed = batch.flatMap { call in call.messages.compactMap { $0.new.idempotencyKey }.map { KeyRef(appID: call.appID, key: $0) } }
        var apps = Set<String>()
        var stored: [KeyRef: Data] = [:]
        for try await (isKey, appID, key, fingerprint) in try await connection.query(
            """
            SELECT false, id, '', ''::bytea FROM app WHERE id = ANY(\(Array(Set(batch.map(\.appID))))::text[])
            UNION ALL
            SELECT true, app_id, idempotency_key, fingerprint FROM message
            WHERE idempotency_key IS NOT NULL
              AND (app_id, idempotency_key) IN (SELECT * FROM unnest(\(keyed.map(\.appID))::text[], \(keyed.map(\.key))::text[]))
            """, logger: logger
        ).decode((Bool, String, String, Data).self) {
            if isKey {
                stored[KeyRef(appID: appID, key: key)] = fingerprint
            } else {
                apps.insert(appID)
            }
        }
        return (apps, stored)
    }
}

/// A batch's new messages, inserted with one statement.
private struct FreshMessages {
    private(set) var messages: [PreparedMessage] = []
    private var ids: [String] = []
    private var appIDs: [String] = []
    private var nows: [Int64] = []

    var count: Int { messages.count }

    mutating func append(_ message: PreparedMessage, appID: String, now: Int64) {
        messages.append(message)
        ids.append(UUID.timeOrdered().lowercaseString)
        appIDs.append(appID)
        nows.append(now)
    }

    mutating func removeLast(_ count: Int) {
        messages.removeLast(count)
        ids.removeLast(count)
        appIDs.removeLast(count)
        nows.removeLast(count)
    }

    /// Inserts them all and numbers each recipient's mailbox in batch order, as one append after
    /// the other would (the sequence rows are the batch's already). Returns each message's
    /// sequences by user; a message another node stored first is left out and gets none.
    func insert(on connection: PostgresConnection, logger: Logger) async throws -> [[String: Int64]] {
        var sequences = [[String: Int64]](repeating: [:], count: messages.count)
        guard !messages.isEmpty else { return sequences }
        let indexes = messages.indices.map(Int64.init)
        let recipientIndexes = messages.indices.flatMap { index in messages[index].recipients.map { _ in Int64(index) } }
        let recipients = messages.flatMap(\.recipients)
        // Arrays cannot carry NULLs here: '' stands for no hints and no key (a key is at least one
        // byte, hints are a JSON object), Int64.min for no expiry.
        let none = Int64.min
        let expiries = messages.map { $0.new.expiresAt?.truncatedToMilliseconds.millisecondsSince1970 ?? none }
        let counts = messages.map(\.new.kind.countsAsUnread)
        let increments = messages.indices.map { counts[$0] && expiries[$0] == none ? Int32(1) : 0 }
        let expiring = messages.indices.map { counts[$0] && expiries[$0] != none }
        for try await (index, userID, sequence) in try await connection.query(
            """
            WITH input AS (
                SELECT * FROM unnest(\(indexes)::int8[], \(ids)::text[], \(appIDs)::text[], \(messages.map(\.new.kind.rawValue))::text[],
                                     \(messages.map { ByteBuffer(bytes: $0.new.payload) })::bytea[], \(messages.map { $0.hintsJSON ?? "" })::text[],
                                     \(messages.map(\.new.urgency.rawValue))::text[], \(expiries)::int8[],
                                     \(messages.map { $0.new.idempotencyKey ?? "" })::text[], \(messages.map { ByteBuffer(bytes: $0.fingerprint) })::bytea[],
                                     \(nows)::int8[], \(increments)::int4[], \(expiring)::bool[])
                    AS i(idx, id, app_id, kind, payload, hints, urgency, expires_at, idempotency_key, fingerprint, created_at, increment, expiring)
            ), inserted AS (
                INSERT INTO message (id, app_id, kind, payload, hints, urgency, expires_at, idempotency_key, fingerprint, created_at)
                SELECT id, app_id, kind, payload, NULLIF(hints, ''), urgency, NULLIF(expires_at, \(none)), NULLIF(idempotency_key, ''),
                       fingerprint, created_at
                FROM input ORDER BY idx
                ON CONFLICT (app_id, idempotency_key) WHERE idempotency_key IS NOT NULL DO NOTHING
                RETURNING id
            ), numbered AS (
                SELECT i.idx, i.id, i.app_id, r.user_id, i.created_at, i.increment, i.expiring, i.expires_at,
                       row_number() OVER (PARTITION BY i.app_id, r.user_id ORDER BY i.idx) AS k
                FROM input i JOIN inserted ON inserted.id = i.id
                JOIN unnest(\(recipientIndexes)::int8[], \(recipients)::text[]) AS r(idx, user_id) ON r.idx = i.idx
            ), totals AS (
                SELECT app_id, user_id, count(*) AS n, sum(increment) AS unread, max(created_at) AS changed_at
                FROM numbered GROUP BY app_id, user_id
            ), bumped AS (
                UPDATE user_sequence s SET last_sequence = s.last_sequence + t.n, unread = s.unread + t.unread, changed_at = t.changed_at
                FROM totals t WHERE s.app_id = t.app_id AND s.user_id = t.user_id
                RETURNING s.app_id, s.user_id, s.last_sequence - t.n AS base
            ), placed AS (
                SELECT n.idx, n.id, n.app_id, n.user_id, b.base + n.k AS sequence, n.expiring, n.expires_at
                FROM numbered n JOIN bumped b ON b.app_id = n.app_id AND b.user_id = n.user_id
            ), boxed AS (
                INSERT INTO mailbox (app_id, user_id, sequence, message_id) SELECT app_id, user_id, sequence, id FROM placed
            ), unread_rows AS (
                INSERT INTO unread_expiring (app_id, user_id, message_id, expires_at)
                SELECT app_id, user_id, id, expires_at FROM placed WHERE expiring
            )
            SELECT idx, user_id, sequence FROM placed
            """, logger: logger
        ).decode((Int64, String, Int64).self) {
            sequences[Int(index)][userID] = sequence
        }
        return sequences
    }

    func appended(_ index: Int, sequences: [String: Int64]) -> AppendedMessage {
        let message = messages[index]
        let stored = Message(
            id: ids[index], appID: appIDs[index], kind: message.new.kind, payload: message.new.payload, hints: message.new.hints,
            urgency: message.new.urgency, expiresAt: message.new.expiresAt?.truncatedToMilliseconds,
            idempotencyKey: message.new.idempotencyKey, createdAt: Date(millisecondsSince1970: nows[index]))
        // Positions keep the order given.
        let positions = message.recipients.map { MailboxPosition(userID: $0, sequence: sequences[$0]!) }
        return AppendedMessage(message: stored, positions: positions, isDuplicate: false)
    }
}

/// What `PostgresClient` and `PostgresConnection` share: running a query.
protocol PostgresQueryRunner: Sendable {
    func run(_ query: PostgresQuery, logger: Logger) async throws -> PostgresRowSequence
}

extension PostgresClient: PostgresQueryRunner {
    func run(_ query: PostgresQuery, logger: Logger) async throws -> PostgresRowSequence { try await self.query(query, logger: logger) }
}

extension PostgresConnection: PostgresQueryRunner {
    func run(_ query: PostgresQuery, logger: Logger) async throws -> PostgresRowSequence { try await self.query(query, logger: logger) }
}

extension Message {
    init(postgres row: PostgresRandomAccessRow) throws {
        let kind = try row["kind"].decode(String.self)
        let urgency = try row["urgency"].decode(String.self)
        guard let parsedKind = MessageKind(rawValue: kind), let parsedUrgency = MessageUrgency(rawValue: urgency) else {
            throw BeckonStoreError.invalidArgument(field: "message", reason: "unknown kind or urgency in the database")
        }
        self.init(
            id: try row["id"].decode(String.self),
            appID: try row["app_id"].decode(String.self),
            kind: parsedKind,
            payload: try row["payload"].decode(Data?.self) ?? Data(),
            hints: try row["hints"].decode(String?.self).map { try StoreJSON.decode(NotificationHints.self, from: $0) },
            urgency: parsedUrgency,
            expiresAt: try row["expires_at"].decode(Int64?.self).map(Date.init(millisecondsSince1970:)),
            idempotencyKey: try row["idempotency_key"].decode(String?.self),
            createdAt: Date(millisecondsSince1970: try row["created_at"].decode(Int64.self)))
    }
}
