import APNSCore
import BeckonProtocol
import Foundation
import Logging
import PostgresNIO

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
        ids.append(UUID.timeOrdered(at: Date(millisecondsSince1970: now)).lowercaseString)
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
