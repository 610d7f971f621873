import Foundation
import Logging
import PostgresNIO

/// Runs concurrent writes on PostgreSQL in shared transactions: `GroupCommit`'s counterpart for
/// `PostgresStore`, used for appends, acks and push results.
///
/// One transaction per call makes every message pay a commit (a WAL flush) and hold its users'
/// sequence rows across it, so appends to a busy user queue one flush after another; and each
/// statement costs PostgreSQL far more to parse, plan and start than the rows it writes. Here
/// callers queue their work and wait; one drainer at a time takes what is queued and runs it on
/// one connection in one transaction:
///
/// 1. it locks the sequence row of every user the batch writes, all at once in the database's
///    order of (app, user), so that two nodes' batches cannot take them in opposite orders;
/// 2. it runs the whole batch in a few set-based statements (`runAll`), each call's outcome its
///    own: a call that cannot succeed (an idempotency conflict) writes nothing and fails alone;
/// 3. it commits, and only then answers the callers: nothing is reported before it is durable.
///
/// If the batch cannot run that way (a statement failed, or another node raced it to an
/// idempotency key), it is rolled back and run again one call at a time, each call in its own
/// savepoint, so a failing call is undone alone. While a commit is under way new work piles up
/// for the next batch, so the batch grows with the load. PostgreSQL can still report a deadlock or
/// a serialization failure between two nodes (a call waiting on another node's uncommitted
/// idempotency key, say): the batch is then rolled back and run again, a few times, before its
/// callers get the error.
final class PostgresGroupCommit<Work: PostgresBatchedWrite>: @unchecked Sendable {
    private let client: PostgresClient
    private let logger: Logger
    private let lock = NSLock()
    private var queue: [Pending] = []
    private var draining = false
    private var committed = 0
    private var ranCallByCall = 0
    private var runsTogether = true

    /// In the one-call-at-a-time fallback each call that writes takes a subtransaction id; a
    /// backend caches 64 of them, and past that every other session's snapshots must look
    /// subtransactions up on disk. So a batch stops at 64 calls, the rest wait for the next one.
    static var maximumBatch: Int { 64 }
    /// Runs of a batch that PostgreSQL aborted as a deadlock or serialization failure.
    static var attempts: Int { 5 }

    init(client: PostgresClient, logger: Logger) {
        self.client = client
        self.logger = logger
    }

    /// Transactions committed so far (tests check that concurrent calls share them).
    var commits: Int { lock.withLock { committed } }
    /// Batches that fell back to one call at a time.
    var fallbacks: Int { lock.withLock { ranCallByCall } }

    /// Off: every batch runs one call at a time, in savepoints (tests cover that path this way).
    var combinesCalls: Bool {
        get { lock.withLock { runsTogether } }
        set { lock.withLock { runsTogether = newValue } }
    }

    /// Runs `work` in the next batch and returns its outcome once the batch has committed.
    func write(_ work: Work) async throws -> Work.Output {
        try await withCheckedThrowingContinuation { continuation in
            let startDrainer = lock.withLock {
                queue.append(Pending(work: work, continuation: continuation))
                defer { draining = true }
                return !draining
            }
            // Not a child of the caller: a caller that goes away must not take the batch with it.
            if startDrainer { Task { await self.drainWhileQueued() } }
        }
    }

    private struct Pending {
        var work: Work
        var continuation: CheckedContinuation<Work.Output, any Error>
    }

    /// The batch's transaction failed before its COMMIT was sent: nothing of it is stored.
    private struct BeforeCommit: Error {
        var cause: any Error
    }

    /// Thrown inside the transaction, before its COMMIT, to roll it back and run the batch one
    /// call at a time; `cause` is what went wrong in the combined statements, if anything did.
    private struct RunOneByOne: Error {
        var cause: (any Error)?
    }

    private func drainWhileQueued() async {
        while let batch = nextBatch() {
            await commit(batch)
        }
    }

    private func nextBatch() -> [Pending]? {
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

    private func commit(_ batch: [Pending]) async {
        let works = batch.map(\.work)
        var together = combinesCalls
        var attempt = 1
        while true {
            do {
                let outcomes = try await client.withConnection { connection in
                    try await self.run(works, together: together, on: connection)
                }
                lock.withLock { committed += 1 }
                for (pending, outcome) in zip(batch, outcomes) { pending.continuation.resume(with: outcome) }
                return
            } catch where Self.isRetryable(error) && attempt < Self.attempts {
                logger.debug("write batch retried", metadata: ["error": "\(String(reflecting: error))", "attempt": "\(attempt)"])
                attempt += 1
            } catch let error as BeforeCommit {
                // A statement the calls share failed (a user id too long for the index, say):
                // each call runs again in a transaction of its own, so only the one that broke
                // it fails.
                guard batch.count > 1 else {
                    batch[0].continuation.resume(throwing: error.cause)
                    return
                }
                logger.debug("write batch split", metadata: ["error": "\(String(reflecting: error.cause))"])
                for pending in batch { await commit([pending]) }
                return
            } catch let error as RunOneByOne {
                // Nothing was committed; one call at a time finds the call that fails, if any.
                if let cause = error.cause {
                    logger.debug("write batch run again call by call", metadata: ["error": "\(String(reflecting: cause))"])
                }
                lock.withLock { ranCallByCall += 1 }
                together = false
            } catch {
                // Nothing of the batch is stored (or the commit's fate is unknown: the connection
                // broke): every caller gets the error, and a retry with its idempotency key is safe.
                for pending in batch { pending.continuation.resume(throwing: error) }
                return
            }
        }
    }

    private func run(
        _ batch: [Work], together: Bool, on connection: PostgresConnection
    ) async throws -> [Result<Work.Output, any Error>] {
        try await connection.query("BEGIN", logger: logger)
        let outcomes: [Result<Work.Output, any Error>]
        do {
            var seen = Set<UserRef>()
            let users = batch.flatMap(\.users).filter { seen.insert($0).inserted }
            let created = try await lockSequenceRows(users, on: connection)
            if together {
                let all: [Result<Work.Output, any Error>]?
                do {
                    all = try await Work.runAll(batch, on: connection, logger: logger)
                } catch where !Self.isRetryable(error) {
                    throw RunOneByOne(cause: error)
                }
                guard let all else { throw RunOneByOne() }
                outcomes = all
            } else {
                outcomes = try await runOneByOne(batch, on: connection)
            }
            try await dropUnusedSequenceRows(created, on: connection)
        } catch {
            // Leaves the connection usable for the pool.
            _ = try? await connection.query("ROLLBACK", logger: logger)
            throw error is RunOneByOne || Self.isRetryable(error) ? error : BeforeCommit(cause: error)
        }
        do {
            try await connection.query("COMMIT", logger: logger)
        } catch {
            // A failed COMMIT has rolled back already, unless the connection broke: then whether
            // it committed is unknown, and the callers are told it failed (design rule 9 holds:
            // nothing is reported stored that might not be).
            _ = try? await connection.query("ROLLBACK", logger: logger)
            throw error
        }
        return outcomes
    }

    /// Each call in its own savepoint, so a failing one is undone alone. The savepoints are not
    /// released: a RELEASE is one more round trip, and they nest harmlessly until the commit.
    /// `ROLLBACK TO` names the newest savepoint of that name, which is the failing call's.
    private func runOneByOne(
        _ batch: [Work], on connection: PostgresConnection
    ) async throws -> [Result<Work.Output, any Error>] {
        var outcomes: [Result<Work.Output, any Error>] = []
        for work in batch {
            try await connection.query("SAVEPOINT call", logger: logger)
            do {
                outcomes.append(.success(try await work.run(on: connection, logger: logger)))
            } catch where Self.isRetryable(error) {
                throw error
            } catch {
                try await connection.query("ROLLBACK TO SAVEPOINT call", logger: logger)
                outcomes.append(.failure(error))
            }
        }
        return outcomes
    }

    /// Takes every user's sequence row, creating the missing ones with sequence 0, in one statement
    /// sorted by (app, user): rows are locked in the order the sort hands them to the insert.
    /// `DO UPDATE … WHERE false` locks an existing row without writing a new version of it, and
    /// returns only the rows it created. An app that does not exist takes no row (the foreign key
    /// would abort the batch); its call fails.
    private func lockSequenceRows(_ users: [UserRef], on connection: PostgresConnection) async throws -> [UserRef] {
        guard !users.isEmpty else { return [] }
        var created: [UserRef] = []
        for try await (appID, userID) in try await connection.query(
            """
            INSERT INTO user_sequence (app_id, user_id, last_sequence, unread, changed_at)
            SELECT w.app_id, w.user_id, 0, 0, 0 FROM unnest(\(users.map(\.appID))::text[], \(users.map(\.userID))::text[]) AS w(app_id, user_id)
            WHERE EXISTS (SELECT 1 FROM app WHERE app.id = w.app_id)
            ORDER BY w.app_id, w.user_id
            ON CONFLICT (app_id, user_id) DO UPDATE SET last_sequence = user_sequence.last_sequence WHERE false
            RETURNING app_id, user_id
            """, logger: logger
        ).decode((String, String).self) {
            created.append(UserRef(appID: appID, userID: userID))
        }
        return created
    }

    /// A row `lockSequenceRows` created that no write used (its call failed, say) goes, so the
    /// store holds the same rows as without batching. A used row's sequence is at least 1.
    private func dropUnusedSequenceRows(_ created: [UserRef], on connection: PostgresConnection) async throws {
        guard !created.isEmpty else { return }
        try await connection.query(
            """
            DELETE FROM user_sequence WHERE last_sequence = 0
              AND (app_id, user_id) IN (SELECT * FROM unnest(\(created.map(\.appID))::text[], \(created.map(\.userID))::text[]))
            """, logger: logger)
    }

    static func isRetryable(_ error: any Error) -> Bool {
        guard let code = (error as? PSQLError)?.serverInfo?[.sqlState] else { return false }
        return code == PostgresError.Code.deadlockDetected.raw || code == PostgresError.Code.serializationFailure.raw
    }
}
