import Foundation
import GRDB
import GRDBSQLite
import Testing

@testable import BeckonStore

/// What only the SQLite store has: its file, its journal and sync settings, GRDB's migrations.
/// Everything said through the `BeckonStore` protocol is tested on both stores (`withEachStore`).
@Suite struct SQLiteStoreTests {
    @Test func theWriterIsInWALModeWithFullSync() async throws {
        try await withStore { store in
            let (journal, synchronous, foreignKeys) = try await store.writer.write { db in
                (try String.fetchOne(db, sql: "PRAGMA journal_mode"),
                 try Int.fetchOne(db, sql: "PRAGMA synchronous"),
                 try Bool.fetchOne(db, sql: "PRAGMA foreign_keys"))
            }
            #expect(journal == "wal")
            #expect(synchronous == 2)  // FULL
            #expect(foreignKeys == true)
        }
    }

    /// The writer keeps its savepoints' sub-journals in memory, not in temporary files; readers
    /// keep SQLite's default.
    @Test func theWriterKeepsItsTemporaryJournalsInMemory() async throws {
        try await withStore { store in
            let query = { @Sendable (db: Database) throws -> Int? in try Int.fetchOne(db, sql: "PRAGMA temp_store") }
            let (written, read) = (try await store.writer.write(query), try await store.writer.read(query))
            #expect(written == 2)  // MEMORY
            #expect(read == 0)  // DEFAULT
        }
    }

    /// SQLite keeps no allocation statistics: each allocation would take a mutex that every
    /// connection shares. The memory it says it uses stays 0 while it holds pages. In a process
    /// of its own, as in `beckon serve`: in this one other suites may open SQLite first, and the
    /// setting is refused once SQLite has started.
    @Test func sqliteKeepsNoAllocationStatistics() async {
        await #expect(processExitsWith: .success) {
            let directory = FileManager.default.temporaryDirectory.appendingPathComponent("beckon-memstatus-\(UUID().uuidString)").path
            defer { try? FileManager.default.removeItem(atPath: directory) }
            let store = try SQLiteStore(path: directory + "/beckon.sqlite")
            try await store.createApp(.fixture())
            var (used, highest): (Int64, Int64) = (0, 0)
            guard sqlite3_status64(SQLITE_STATUS_MEMORY_USED, &used, &highest, 0) == SQLITE_OK, used == 0 else { exit(1) }
            try store.close()
        }
    }

    /// `database.cache-mib` and `database.mmap-mib` reach every connection, readers included.
    @Test func theWriterAndTheReadersUseTheConfiguredCacheAndMemoryMap() async throws {
        try await withTemporaryDirectory { directory in
            let store = try SQLiteStore(path: directory + "/beckon.sqlite", memory: .init(cacheMiB: 48, mmapMiB: 96))
            let settings = { @Sendable (db: Database) throws -> [Int?] in
                [try Int.fetchOne(db, sql: "PRAGMA cache_size"), try Int.fetchOne(db, sql: "PRAGMA mmap_size")]
            }
            let written = try await store.writer.write(settings)
            let read = try await store.writer.read(settings)
            for values in [written, read] {
                #expect(values == [-48 * 1024, 96 * 1024 * 1024])
            }
            let off = try SQLiteStore(path: directory + "/other.sqlite", memory: .init(cacheMiB: 1, mmapMiB: 0))
            #expect(try await off.writer.read { db in try Int.fetchOne(db, sql: "PRAGMA mmap_size") } == 0)
        }
    }

    /// The event log's triggers exist only while an app's log is on, and a message's trace finds
    /// its pushes by device: a scan of the outbox per trace (or, before, of a push's messages per
    /// attempt: 197 pushes/s in a burst with a webhook, found by bench-delivery.py --webhook) grows
    /// with every push ever sent.
    @Test func theEventTriggersComeWithTheLogAndATracesPushesAreFoundByIndex() async throws {
        try await withTemporaryDirectory { directory in
            let store = try SQLiteStore(path: directory + "/beckon.sqlite")
            func triggers() async throws -> [String] {
                try await store.writer.read { db in
                    try String.fetchAll(db, sql: "SELECT name FROM sqlite_master WHERE type = 'trigger' ORDER BY name")
                }
            }
            #expect(try await triggers().isEmpty)
            try await store.setEventLogApps(["chat"], now: Date())
            #expect(try await triggers() == ["message_event_accepted", "message_event_push", "message_event_read", "message_event_receipt"])
            let plan = try await store.writer.read { db in
                try Row.fetchAll(db, sql: "EXPLAIN QUERY PLAN " + SQLiteStore.tracedPushes, arguments: ["chat", "phone", "m"])
                    .map { $0["detail"] as String? ?? "" }.joined(separator: "; ")
            }
            #expect(plan.contains("push_outbox_device"), "\(plan)")
            try await store.setEventLogApps([], now: Date())
            #expect(try await triggers().isEmpty)
            try store.close()
        }
    }

    /// v13 moved a push's messages and attempts from their tables (v11) onto its outbox row: a
    /// file written before keeps its traces.
    @Test func aPushsMessagesAndAttemptsMoveOntoItsOutboxRow() async throws {
        try await withTemporaryDirectory { directory in
            let path = directory + "/beckon.sqlite"
            let pool = try DatabasePool(path: path)
            try SQLiteStore.migrator.migrate(pool, upTo: "v12-event-log")
            try await pool.write { db in
                try db.execute(sql: """
                    INSERT INTO push_outbox (id, app_id, device_id, token_kind, reason, strategy, message_count, state,
                                             attempts, next_attempt_at, created_at, sent_at, status)
                    VALUES ('p1', 'chat', 'phone', 'remote', 'alert', 'content', 2, 'sent', 2, 0, 1000, 1011, 200),
                           ('p2', 'chat', 'phone', 'remote', 'alert', 'content', 1, 'pending', 0, 0, 1100, NULL, NULL);
                    INSERT INTO push_message (message_id, push_id, created_at) VALUES ('m2', 'p1', 1000), ('m1', 'p1', 1000);
                    INSERT INTO push_attempt (push_id, attempt, at, outcome, status, reason, unique_id)
                    VALUES ('p1', 2, 1011, 'sent', 200, NULL, 'u-1'), ('p1', 1, 1001, 'retry', 503, 'ServiceUnavailable', NULL);
                    """)
            }
            try pool.close()
            let store = try SQLiteStore(path: path)
            let rows = try await store.writer.read { db in
                try Row.fetchAll(db, sql: "SELECT id, message_ids, attempt_log FROM push_outbox ORDER BY id")
            }
            #expect(rows.map { $0["message_ids"] as String? } == [#"["m1","m2"]"#, nil])
            let attempts = try PushAttempt.log(rows[0]["attempt_log"])
            #expect(attempts == [
                PushAttempt(number: 1, at: Date(millisecondsSince1970: 1001), outcome: .retry, status: 503, reason: "ServiceUnavailable"),
                PushAttempt(number: 2, at: Date(millisecondsSince1970: 1011), outcome: .sent, status: 200, uniqueID: "u-1"),
            ])
            #expect(try PushAttempt.log(rows[1]["attempt_log"]).isEmpty)
            try store.close()
        }
    }

    @Test func migrationsRunOnAnEmptyFileAndNotAgainOnReopen() async throws {
        try await withTemporaryDirectory { directory in
            let path = directory + "/beckon.sqlite"
            let store = try SQLiteStore(path: path)
            let applied = try await store.appliedMigrations()
            #expect(applied == Self.migrations)
            let tables = try await store.writer.read { db in
                try String.fetchAll(db, sql: "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'grdb_%' AND name NOT LIKE 'sqlite_%' ORDER BY name")
            }
            #expect(tables == Self.tables)
            try await store.createApp(.fixture())
            try store.close()

            for _ in 0..<2 {
                let reopened = try SQLiteStore(path: path)
                #expect(try await reopened.appliedMigrations() == Self.migrations)
                #expect(try await reopened.apps().map(\.id) == ["chat"])
                try reopened.close()
            }
        }
    }

    static let migrations = [
        "v1", "v2-delivery", "v3-content-key", "v4-unread-counters", "v5-unread-expiry-index", "v6-rendered-outbox",
        "v7-call-ends", "v8-delivery-versions", "v9-delivery-connected", "v10-caller-apns-id", "v11-message-trace",
        "v12-event-log", "v13-outbox-trace",
    ]

    /// The store's tables; PostgreSQL's schema has these too (PostgresStoreTests).
    static let tables = [
        "api_key", "app", "call_end", "delivery_state", "device", "device_cursor", "event_stream", "mailbox", "message",
        "message_event", "message_read", "message_receipt", "push_outbox", "unread_expiring",
        "user_sequence", "webhook_attempt",
    ]

    /// PostgreSQL's twin: ClusterStoreTests.aNodeRefusesADatabaseANewerBeckonMigrated.
    @Test func aFileFromANewerBeckonIsRefused() async throws {
        try await withTemporaryDirectory { directory in
            let path = directory + "/beckon.sqlite"
            try SQLiteStore(path: path).close()
            let pool = try DatabasePool(path: path)
            try await pool.write { db in
                try db.execute(sql: "INSERT INTO grdb_migrations (identifier) VALUES ('v999-from-the-future')")
            }
            try pool.close()
            #expect(throws: BeckonStoreError.schemaTooNew) {
                try SQLiteStore(path: path)
            }
        }
    }

    @Test func inMemoryStoreWorksForQuickTests() async throws {
        let store = try SQLiteStore(location: .inMemory)
        try await store.createApp(.fixture())
        let appended = try await store.appendMessages(appID: "chat", [NewMessage(recipients: ["ann"])])
        #expect(appended[0].positions[0].sequence == 1)
    }

    /// Not in the file, nor in its write-ahead log (AuthTests checks the rows on both stores).
    @Test func theSecretIsNotInTheFile() async throws {
        try await withTemporaryDirectory { directory in
            let path = directory + "/beckon.sqlite"
            let store = try SQLiteStore(path: path)
            try await store.createApp(.fixture())
            let key = try await store.createAPIKey(appID: "chat", name: nil)
            try await store.registerDevice(.fixture(device: "phone", user: "ann"))
            let credential = try await store.issueDeviceCredential(DeviceRef(appID: "chat", deviceID: "phone"))
            try store.close()
            var bytes = try Data(contentsOf: URL(fileURLWithPath: path))
            if let wal = try? Data(contentsOf: URL(fileURLWithPath: path + "-wal")) { bytes += wal }
            for secret in [key.secret, credential] {
                let random = Data(secret.split(separator: "_").last!.utf8)
                #expect(bytes.range(of: random) == nil)
            }
        }
    }
}
