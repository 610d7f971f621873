import Foundation
import Logging
import PostgresNIO

/// Runs concurrent appends on PostgreSQL in shared transactions, so that many of them pay for one
/// commit: `GroupCommit`'s counterpart for `PostgresStore`.
///
/// Each commit waits for the WAL to reach the disk, and an append holds its users' sequence rows
/// until it commits, so one transaction per call costs every message a flush and makes appends to
/// a busy user queue one flush after another. Here callers queue their work and wait; one drainer
/// at a time takes what is queued and runs it on one connection in one transaction:
///
/// 1. it locks the sequence row of every user the batch writes, all at once in the database's
///    order of (app, user), so that two nodes' batches cannot take them in opposite orders;
/// 2. it runs each caller's piece in its own savepoint, so a piece that fails (an idempotency
///    conflict) is undone alone and fails only its caller;
/// 3. it commits, and only then answers the callers: nothing is reported before it is durable.
///
/// While a commit is under way new work piles up for the next batch, so the batch grows with the
/// load. PostgreSQL can still report a deadlock or a serialization failure between two nodes (a
/// piece waiting on another node's uncommitted idempotency key, say): the whole batch is rolled
/// back and run again, a few times, before its callers get the error.
final class PostgresGroupCommit: @unchecked Sendable {
    private let client: PostgresClient
    private let logger: Logger
    private let lock = NSLock()
    private var queue: [any PendingPostgresWrite] = []
    private var draining = false
    private var committed = 0

    /// Each piece that writes takes a subtransaction id; a backend caches 64 of them, and past
    /// that every other session's snapshots must look subtransactions up on disk. So a batch
    /// stops at 64 pieces, and the rest wait for the next one.
    static let maximumBatch = 64
    /// Runs of a batch that PostgreSQL aborted as a deadlock or serialization failure.
    static let attempts = 5

    init(client: PostgresClient, logger: Logger) {
        self.client = client
        self.logger = logger
    }

    /// Transactions committed so far (tests check that concurrent calls share them).
    var commits: Int { lock.withLock { committed } }

    /// Runs `work` in the next batch. `users` are the sequence rows it will write: the batch
    /// locks them up front, in order, with everyone else's.
    func write<T: Sendable>(
        locking users: [UserRef], _ work: @escaping @Sendable (PostgresConnection) async throws -> T
    ) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            let pending = PendingPiece(users: users, work, continuation: continuation)
            let startDrainer = lock.withLock {
                queue.append(pending)
                defer { draining = true }
                return !draining
            }
            // Not a child of the caller: a caller that goes away must not take the batch with it.
            if startDrainer { Task { await self.drainWhileQueued() } }
        }
    }

    private func drainWhileQueued() async {
        while let batch = nextBatch() {
            await commit(batch)
        }
    }

    private func nextBatch() -> [any PendingPostgresWrite]? {
        lock.withLock {
            guard !queue.isEmpty else {
                draining = false
                return nil
            }
            let count = min(queue.count, Self.maximumBatch)
            defer { queue.removeFirst(count) }
            return Array(queue.prefix(count))
        }
    }

    private func commit(_ batch: [any PendingPostgresWrite]) async {
        var attempt = 1
        while true {
            do {
                try await client.withConnection { connection in
                    try await self.run(batch, on: connection)
                }
                lock.withLock { committed += 1 }
                for pending in batch { pending.publish() }
                return
            } catch where Self.isRetryable(error) && attempt < Self.attempts {
                logger.debug("append batch retried", metadata: ["error": "\(String(reflecting: error))", "attempt": "\(attempt)"])
                attempt += 1
            } catch {
                // Nothing of the batch is stored (or the commit's fate is unknown: the connection
                // broke): every caller gets the error, and a retry with its idempotency key is safe.
                for pending in batch { pending.fail(error) }
                return
            }
        }
    }

    private func run(_ batch: [any PendingPostgresWrite], on connection: PostgresConnection) async throws {
        try await connection.query("BEGIN", logger: logger)
        do {
            var seen = Set<UserRef>()
            let users = batch.flatMap(\.users).filter { seen.insert($0).inserted }
            try await lockSequenceRows(users, on: connection)
            var undone = false
            for pending in batch {
                if try await !pending.run(on: connection, logger: logger) { undone = true }
            }
            if undone { try await dropUnusedSequenceRows(users, on: connection) }
            try await connection.query("COMMIT", logger: logger)
        } catch {
            // Leaves the connection usable for the pool; a failed COMMIT has rolled back already.
            _ = try? await connection.query("ROLLBACK", logger: logger)
            throw error
        }
    }

    /// Takes every user's sequence row, creating the missing ones with sequence 0, in one statement
    /// sorted by (app, user): rows are locked in the order the sort hands them to the insert.
    /// `DO UPDATE … WHERE false` locks an existing row without writing a new version of it. An app
    /// that does not exist takes no row (the foreign key would abort the batch); its piece fails.
    private func lockSequenceRows(_ users: [UserRef], on connection: PostgresConnection) async throws {
        guard !users.isEmpty else { return }
        try await connection.query(
            """
            INSERT INTO user_sequence (app_id, user_id, last_sequence, unread, changed_at)
            SELECT w.app_id, w.user_id, 0, 0, 0 FROM unnest(\(users.map(\.appID))::text[], \(users.map(\.userID))::text[]) AS w(app_id, user_id)
            WHERE EXISTS (SELECT 1 FROM app WHERE app.id = w.app_id)
            ORDER BY w.app_id, w.user_id
            ON CONFLICT (app_id, user_id) DO UPDATE SET last_sequence = user_sequence.last_sequence WHERE false
            """, logger: logger)
    }

    /// A piece that was undone may leave a row created by `lockSequenceRows` that nothing used: it
    /// goes, so the store holds the same rows as without batching. A used row's sequence is at
    /// least 1.
    private func dropUnusedSequenceRows(_ users: [UserRef], on connection: PostgresConnection) async throws {
        try await connection.query(
            """
            DELETE FROM user_sequence WHERE last_sequence = 0
              AND (app_id, user_id) IN (SELECT * FROM unnest(\(users.map(\.appID))::text[], \(users.map(\.userID))::text[]))
            """, logger: logger)
    }

    static func isRetryable(_ error: any Error) -> Bool {
        guard let code = (error as? PSQLError)?.serverInfo?[.sqlState] else { return false }
        return code == PostgresError.Code.deadlockDetected.raw || code == PostgresError.Code.serializationFailure.raw
    }
}

private protocol PendingPostgresWrite: AnyObject, Sendable {
    var users: [UserRef] { get }
    /// Runs the piece in a savepoint and keeps its outcome until the transaction commits. Returns
    /// false if the piece was undone; throws only what must abort the whole batch.
    func run(on connection: PostgresConnection, logger: Logger) async throws -> Bool
    func publish()
    func fail(_ error: any Error)
}

private final class PendingPiece<T: Sendable>: PendingPostgresWrite, @unchecked Sendable {
    let users: [UserRef]
    private let work: @Sendable (PostgresConnection) async throws -> T
    private let continuation: CheckedContinuation<T, any Error>
    /// Set inside the transaction, reported only once it has committed. Touched only by the
    /// drainer, one batch at a time.
    private var staged: Result<T, any Error>?

    init(
        users: [UserRef], _ work: @escaping @Sendable (PostgresConnection) async throws -> T,
        continuation: CheckedContinuation<T, any Error>
    ) {
        self.users = users
        self.work = work
        self.continuation = continuation
    }

    func run(on connection: PostgresConnection, logger: Logger) async throws -> Bool {
        // Not released after the piece: a RELEASE is one more round trip on the batch's only
        // connection, and the savepoints nest harmlessly until the commit. `ROLLBACK TO` names
        // the newest savepoint of that name, which is this piece's.
        try await connection.query("SAVEPOINT piece", logger: logger)
        do {
            staged = .success(try await work(connection))
            return true
        } catch where PostgresGroupCommit.isRetryable(error) {
            throw error
        } catch {
            try await connection.query("ROLLBACK TO SAVEPOINT piece", logger: logger)
            staged = .failure(error)
            return false
        }
    }

    func publish() {
        continuation.resume(with: staged ?? .failure(CancellationError()))
    }

    func fail(_ error: any Error) {
        continuation.resume(throwing: error)
    }
}
