import GRDB
import Testing

@testable import BeckonStore

/// Which store failures pass by themselves (and get 503 and a retry rather than 500 and a loss).
@Suite struct StoreUnavailableTests {
    @Test func lockedFullAndUnopenableAreUnavailableAConstraintIsNot() {
        for code in [ResultCode.SQLITE_BUSY, .SQLITE_LOCKED, .SQLITE_FULL, .SQLITE_CANTOPEN, .SQLITE_IOERR_WRITE] {
            #expect(StoreUnavailable.matches(DatabaseError(resultCode: code)), "\(code)")
        }
        #expect(!StoreUnavailable.matches(DatabaseError(resultCode: .SQLITE_CONSTRAINT)))
        #expect(!StoreUnavailable.matches(BeckonStoreError.schemaTooNew))
    }

    /// A real lock: another connection holds the database exclusively past the busy timeout.
    @Test func aDatabaseHeldByAnotherProcessIsUnavailable() async throws {
        try await withTemporaryDirectory { directory in
            let path = directory + "/beckon.sqlite"
            let store = try SQLiteStore(path: path)
            defer { try? store.close() }
            try await store.createApp(.fixture())
            var configuration = Configuration()
            configuration.busyMode = .immediateError
            configuration.allowsUnsafeTransactions = true  // The lock outlives one access, as another process's would.
            let other = try DatabaseQueue(path: path, configuration: configuration)
            try await other.writeWithoutTransaction { db in try db.execute(sql: "BEGIN EXCLUSIVE") }
            let failure = await #expect(throws: (any Error).self) {
                _ = try await store.appendMessages(appID: "chat", [NewMessage(recipients: ["alice"])])
            }
            #expect(failure.map { StoreUnavailable.matches($0) } == true, "\(String(describing: failure))")
            try await other.writeWithoutTransaction { db in try db.execute(sql: "ROLLBACK") }
            #expect(try await store.appendMessages(appID: "chat", [NewMessage(recipients: ["alice"])]).count == 1)
        }
    }
}
