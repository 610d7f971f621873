import Foundation
import GRDB

/// Runs concurrent small writes in shared transactions, so that many of them pay for one fsync.
///
/// With `synchronous = FULL` every commit waits for the disk (a few milliseconds here), which
/// alone would cap appends at a few hundred commits a second. Each caller queues its work and then
/// asks GRDB's serial writer for a turn; whichever turn comes first takes everything queued so far
/// and runs it in one transaction, each piece in its own savepoint so one failing piece does not
/// undo the others. A caller's turn can only come after the turn that took its work has finished,
/// so when its own turn returns, its outcome is known. Nothing is reported before the commit.
final class GroupCommit: @unchecked Sendable {
    private let writer: any DatabaseWriter
    private let lock = NSLock()
    private var queue: [any PendingWrite] = []

    init(writer: any DatabaseWriter) {
        self.writer = writer
    }

    func write<T: Sendable>(_ work: @escaping @Sendable (Database) throws -> T) async throws -> T {
        let pending = Pending(work)
        lock.withLock { queue.append(pending) }
        do {
            try await writer.writeWithoutTransaction { db in self.drain(db) }
        } catch {
            // Our turn never ran (a cancelled task). Withdraw the work if no other turn took it;
            // if one did, its outcome is unknown to our caller, as with any failed commit, and a
            // retry is safe with an idempotency key.
            let withdrawn = lock.withLock {
                if let index = queue.firstIndex(where: { $0 === pending }) {
                    queue.remove(at: index)
                    return true
                }
                return false
            }
            if withdrawn { throw error }
        }
        guard let outcome = pending.outcome else { throw CancellationError() }
        return try outcome.get()
    }

    /// Runs on the writer connection, outside any transaction.
    private func drain(_ db: Database) {
        let batch: [any PendingWrite] = lock.withLock {
            defer { queue.removeAll(keepingCapacity: true) }
            return queue
        }
        guard !batch.isEmpty else { return }
        do {
            try db.inTransaction(.immediate) {
                for pending in batch {
                    pending.run(in: db)
                }
                return .commit
            }
            for pending in batch { pending.publish() }
        } catch {
            // The commit itself failed: nothing of the batch is stored.
            for pending in batch { pending.fail(error) }
        }
    }
}

private protocol PendingWrite: AnyObject, Sendable {
    /// Runs the work in a savepoint and keeps its outcome until the transaction commits.
    func run(in db: Database)
    func publish()
    func fail(_ error: any Error)
}

private final class Pending<T: Sendable>: PendingWrite, @unchecked Sendable {
    private let work: @Sendable (Database) throws -> T
    private let lock = NSLock()
    private var staged: Result<T, any Error>?
    private var published: Result<T, any Error>?

    init(_ work: @escaping @Sendable (Database) throws -> T) {
        self.work = work
    }

    var outcome: Result<T, any Error>? { lock.withLock { published } }

    func run(in db: Database) {
        var result: Result<T, any Error>
        do {
            var value: T?
            try db.inSavepoint {
                value = try work(db)
                return .commit
            }
            result = .success(value!)
        } catch {
            result = .failure(error)
        }
        lock.withLock { staged = result }
    }

    func publish() {
        lock.withLock { published = staged }
    }

    func fail(_ error: any Error) {
        lock.withLock { published = .failure(error) }
    }
}
