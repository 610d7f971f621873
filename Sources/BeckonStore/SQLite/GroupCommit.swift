import Foundation
import GRDB

/// Runs concurrent small writes in shared transactions, so that many of them pay for one fsync.
///
/// With `synchronous = FULL` every commit waits for the disk (a few milliseconds here), which
/// alone would cap appends at a few hundred commits a second. Callers queue their work and wait;
/// one drainer at a time takes everything queued so far and runs it on GRDB's writer in one
/// transaction, each piece in its own savepoint so one failing piece does not undo the others,
/// then answers each caller after the commit — nothing is reported before it is durable. While a
/// commit is under way new work piles up for the next one, so the batch grows with the load. One
/// writer turn per batch, not one per caller: each turn is a hop through GRDB's queue.
final class GroupCommit: @unchecked Sendable {
    private let writer: any DatabaseWriter
    private let lock = NSLock()
    private var queue: [any PendingWrite] = []
    private var draining = false

    init(writer: any DatabaseWriter) {
        self.writer = writer
    }

    func write<T: Sendable>(_ work: @escaping @Sendable (Database) throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            let pending = PendingPiece(work, continuation: continuation)
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
        while true {
            let more = lock.withLock {
                if queue.isEmpty { draining = false }
                return !queue.isEmpty
            }
            guard more else { return }
            do {
                try await writer.writeWithoutTransaction { db in self.drain(db) }
            } catch {
                // The writer refused the turn (closed): nothing ran; tell whoever is queued.
                let batch = lock.withLock {
                    defer { queue.removeAll(keepingCapacity: true) }
                    return queue
                }
                for pending in batch { pending.fail(error) }
            }
        }
    }

    /// Runs on the writer connection, outside any transaction.
    ///
    /// The transaction and the savepoints are cached statements rather than GRDB's
    /// `inTransaction`/`inSavepoint`, which compile their SQL again on every call: with a piece
    /// per message, that compiling was 4% of a node's time.
    private func drain(_ db: Database) {
        let batch: [any PendingWrite] = lock.withLock {
            defer { queue.removeAll(keepingCapacity: true) }
            return queue
        }
        guard !batch.isEmpty else { return }
        do {
            try db.cachedStatement(sql: "BEGIN IMMEDIATE").execute()
            for pending in batch {
                // SQLite ends the whole transaction itself on some errors (a full disk, an I/O
                // error). The next piece would then run in autocommit mode, outside the batch.
                if let error = pending.run(in: db), !db.isInsideTransaction { throw error }
            }
            try db.cachedStatement(sql: "COMMIT").execute()
            for pending in batch { pending.publish() }
        } catch {
            // Nothing of the batch is stored.
            if db.isInsideTransaction { try? db.execute(sql: "ROLLBACK") }
            for pending in batch { pending.fail(error) }
        }
    }
}

private protocol PendingWrite: AnyObject, Sendable {
    /// Runs the work in a savepoint and keeps its outcome until the transaction commits;
    /// returns the work's error, if it failed.
    func run(in db: Database) -> (any Error)?
    func publish()
    func fail(_ error: any Error)
}

private final class PendingPiece<T: Sendable>: PendingWrite, @unchecked Sendable {
    private let work: @Sendable (Database) throws -> T
    private let continuation: CheckedContinuation<T, any Error>
    /// Set inside the transaction, reported only once it has committed. Touched only on the
    /// writer's queue, one drain at a time.
    private var staged: Result<T, any Error>?

    init(_ work: @escaping @Sendable (Database) throws -> T, continuation: CheckedContinuation<T, any Error>) {
        self.work = work
        self.continuation = continuation
    }

    func run(in db: Database) -> (any Error)? {
        do {
            try db.cachedStatement(sql: "SAVEPOINT piece").execute()
            do {
                let value = try work(db)
                try db.cachedStatement(sql: "RELEASE piece").execute()
                staged = .success(value)
                return nil
            } catch {
                // Undo this piece alone; `drain` notices if SQLite ended the transaction instead.
                if db.isInsideTransaction {
                    try db.cachedStatement(sql: "ROLLBACK TO piece").execute()
                    try db.cachedStatement(sql: "RELEASE piece").execute()
                }
                throw error
            }
        } catch {
            staged = .failure(error)
            return error
        }
    }

    func publish() {
        continuation.resume(with: staged ?? .failure(CancellationError()))
    }

    func fail(_ error: any Error) {
        continuation.resume(throwing: error)
    }
}
