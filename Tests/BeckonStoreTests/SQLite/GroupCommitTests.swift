import GRDB
import Testing

@testable import BeckonStore

/// `GroupCommit` on the store's own writer (its savepoints' journals in memory).
@Suite struct GroupCommitTests {
    struct Refused: Error {}

    /// Pieces that write and then fail are undone alone: the pieces committed with them keep
    /// their rows, and the failing callers get their own error.
    @Test func aPieceThatFailsAfterWritingIsUndoneAlone() async throws {
        try await withStore { store in
            try await store.writer.write { db in try db.execute(sql: "CREATE TABLE piece (n INTEGER NOT NULL)") }
            let commit = GroupCommit(writer: store.writer)
            let failed = await withTaskGroup(of: Bool.self) { group in
                for n in 0..<60 {
                    group.addTask {
                        do {
                            try await commit.write { db in
                                // Enough rows that the piece changes pages the others changed too.
                                for copy in 0..<50 {
                                    try db.execute(sql: "INSERT INTO piece (n) VALUES (?)", arguments: [n * 100 + copy])
                                }
                                if n.isMultiple(of: 3) { throw Refused() }
                            }
                            return false
                        } catch {
                            #expect(error is Refused)
                            return true
                        }
                    }
                }
                return await group.reduce(into: 0) { $0 += $1 ? 1 : 0 }
            }
            #expect(failed == 20)
            let kept = try await store.writer.read { db in try Int.fetchAll(db, sql: "SELECT DISTINCT n / 100 FROM piece ORDER BY 1") }
            #expect(kept == (0..<60).filter { !$0.isMultiple(of: 3) })
            #expect(try await store.writer.read { db in try Int.fetchOne(db, sql: "SELECT count(*) FROM piece") } == 40 * 50)
        }
    }
}
