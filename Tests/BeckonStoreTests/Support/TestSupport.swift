import Foundation
import GRDB
import Logging
import PostgresNIO
import Testing

@testable import BeckonStore
import TestCapture

/// The PostgreSQL server the tests may use (`scripts/postgres.sh start` prints one); without it,
/// only the SQLite store is tested.
let postgresTestURL = ProcessInfo.processInfo.environment["BECKON_TEST_POSTGRES_URL"]

/// A clock the test moves by hand.
final class TestClock: @unchecked Sendable {
    private let lock = NSLock()
    private var current: Date

    init(_ start: Date = Date(timeIntervalSince1970: 1_750_000_000)) {
        current = start
    }

    var now: Date { lock.withLock { current } }

    func advance(by seconds: TimeInterval) {
        lock.withLock { current += seconds }
    }
}

/// A directory under the system temp dir, removed when `body` returns.
func withTemporaryDirectory<T>(_ body: (String) async throws -> T) async throws -> T {
    TestLogCapture.install()
    let directory = FileManager.default.temporaryDirectory
        .appendingPathComponent("beckon-store-\(UUID().uuidString)").path
    try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(atPath: directory) }
    return try await body(directory)
}

/// A store on a fresh database file (WAL, like production), closed and removed afterwards.
func withStore<T>(
    clock: TestClock = TestClock(), _ body: (SQLiteStore) async throws -> T
) async throws -> T {
    try await withTemporaryDirectory { directory in
        let store = try SQLiteStore(location: .file(path: directory + "/beckon.sqlite"), now: { clock.now })
        defer { try? store.close() }
        return try await body(store)
    }
}

extension App {
    static func fixture(_ id: String = "chat", environments: Set<PushEnvironment> = [.sandbox, .production]) -> App {
        App(id: id, bundleID: "com.example.\(id)", teamID: "TEAM123456", environments: environments)
    }
}

extension DeviceRegistration {
    static func fixture(
        app: String = "chat", device: String, user: String,
        pushToken: String? = nil, voipToken: String? = nil, environment: PushEnvironment = .production
    ) -> DeviceRegistration {
        DeviceRegistration(
            appID: app, deviceID: device, userID: user, bundleID: "com.example.\(app)", environment: environment,
            pushToken: pushToken, voipToken: voipToken)
    }
}

/// A token of 32 bytes whose hex starts with `seed`.
func token(_ seed: String) -> String {
    let hex = seed.unicodeScalars.map { String($0.value, radix: 16) }.joined()
    return (hex + String(repeating: "0", count: 64)).prefix(64).lowercased()
}

func text(_ string: String) -> Data { Data(string.utf8) }

/// Runs `body` on a fresh SQLite store, and on a fresh PostgreSQL database too when
/// `BECKON_TEST_POSTGRES_URL` is set (CI sets it): one suite, two stores.
func withEachStore(clock: TestClock = TestClock(), _ body: (any BeckonStore) async throws -> Void) async throws {
    try await withStore(clock: clock) { store in try await body(store) }
    guard let url = postgresTestURL else { return }
    try await withFreshPostgresDatabase(url: url, clock: clock, body)
}

/// Like `withEachStore`, with a way to open the same data again as a restarted node would:
/// each `open()` closes the store the previous one opened, then opens a new one on the same file
/// or database (migrating it, as a node does at start).
func withEachStoreReopened(_ body: (_ open: () async throws -> any BeckonStore) async throws -> Void) async throws {
    try await withTemporaryDirectory { directory in
        let path = directory + "/data/beckon.sqlite"  // the directory does not exist yet
        var current: SQLiteStore?
        defer { try? current?.close() }
        try await body {
            try current?.close()
            current = try SQLiteStore(path: path)
            return current!
        }
    }
    guard let url = postgresTestURL else { return }
    try await withFreshPostgresDatabaseURL(url: url) { database in
        var running: Task<Void, Never>?
        func stop() async {
            running?.cancel()
            await running?.value
        }
        do {
            try await body {
                await stop()  // the pool closes its connections
                let store = try PostgresStore(url: database, logger: Logger(label: "beckon.store.test"))
                running = Task { await store.run() }
                try await store.migrate()
                return store
            }
        } catch {
            await stop()
            throw error
        }
        await stop()
    }
}

/// A fresh PostgreSQL database with a store on it, dropped afterwards.
func withFreshPostgresDatabase(url: String, clock: TestClock, _ body: (any BeckonStore) async throws -> Void) async throws {
    try await withFreshPostgresStore(url: url, clock: clock) { store in try await body(store) }
}

func withFreshPostgresStore(url: String, clock: TestClock = TestClock(), _ body: (PostgresStore) async throws -> Void) async throws {
    try await withFreshPostgresDatabaseURL(url: url) { database in
        try await withPostgresStore(url: database, clock: clock, body)
    }
}

/// A store on the database at `url`, migrated, its pool running while `body` runs (a node).
func withPostgresStore(url: String, clock: TestClock = TestClock(), _ body: (PostgresStore) async throws -> Void) async throws {
    TestLogCapture.install()
    let store = try PostgresStore(url: url, logger: Logger(label: "beckon.store.test"), now: { clock.now })
    try await withThrowingTaskGroup(of: Void.self) { tasks in
        tasks.addTask { await store.run() }
        defer { tasks.cancelAll() }
        try await store.migrate()
        try await body(store)
    }
}

/// Two nodes' stores on one fresh database (the first migrates it).
func withTwoPostgresNodes(url: String, _ body: (PostgresStore, PostgresStore) async throws -> Void) async throws {
    try await withFreshPostgresDatabaseURL(url: url) { database in
        try await withPostgresStore(url: database) { a in
            try await withPostgresStore(url: database) { b in try await body(a, b) }
        }
    }
}

/// A database of its own for one test (`body` gets its URL), dropped afterwards.
func withFreshPostgresDatabaseURL(url: String, _ body: (String) async throws -> Void) async throws {
    let name = "beckon_test_\(UUID().uuidString.prefix(8).lowercased())"
    let admin = try PostgresStore(url: url, logger: Logger(label: "beckon.store.test"))
    try await withThrowingTaskGroup(of: Void.self) { tasks in
        tasks.addTask { await admin.run() }
        defer { tasks.cancelAll() }
        try await admin.execute(unsafeSQL: "CREATE DATABASE \(name)")
        var components = URLComponents(string: url)!
        components.path = "/" + name
        do {
            try await body(components.string!)
        } catch {
            _ = try? await admin.execute(unsafeSQL: "DROP DATABASE \(name) WITH (FORCE)")
            throw error
        }
        try await admin.execute(unsafeSQL: "DROP DATABASE \(name) WITH (FORCE)")
    }
}

/// Raw SQL on whichever store this is, for tests that damage a row to see the store cope.
func execute(_ store: any BeckonStore, sql: String) async throws {
    switch store {
    case let sqlite as SQLiteStore:
        try await sqlite.writer.write { db in try db.execute(sql: sql) }
    case let postgres as PostgresStore:
        try await postgres.execute(unsafeSQL: sql)
    default:
        Issue.record("no raw SQL for \(type(of: store))")
    }
}

/// Every value in every table of the store, as text; blobs both as hex and as UTF-8. For tests of
/// what must never be stored.
func everythingStored(_ store: any BeckonStore) async throws -> String {
    switch store {
    case let sqlite as SQLiteStore:
        return try await sqlite.writer.read { db in
            var text = ""
            for table in try String.fetchAll(db, sql: "SELECT name FROM sqlite_master WHERE type = 'table'") {
                for row in try Row.fetchAll(db, sql: "SELECT * FROM \"\(table)\"") {
                    for value in row.databaseValues {
                        switch value.storage {
                        case .blob(let data): text += hex(data) + " " + String(decoding: data, as: UTF8.self)
                        case .string(let string): text += string
                        case .int64(let number): text += "\(number)"
                        case .double(let number): text += "\(number)"
                        case .null: break
                        }
                        text += "\n"
                    }
                }
            }
            return text
        }
    case let postgres as PostgresStore:
        var tables: [String] = []
        for try await table in try await postgres.client.query(
            "SELECT tablename::text FROM pg_tables WHERE schemaname = current_schema()", logger: postgres.logger
        ).decode(String.self) {
            tables.append(table)
        }
        // A row as text shows bytea as hex (`\\x…`), so hex is what the caller looks for there.
        var text = ""
        for table in tables {
            for try await row in try await postgres.client.query(
                PostgresQuery(unsafeSQL: "SELECT t::text FROM \"\(table)\" t"), logger: postgres.logger
            ).decode(String.self) {
                text += row + "\n"
            }
        }
        return text
    default:
        Issue.record("no table dump for \(type(of: store))")
        return ""
    }
}

func hex(_ data: some Sequence<UInt8>) -> String {
    data.map { String(format: "%02x", $0) }.joined()
}
