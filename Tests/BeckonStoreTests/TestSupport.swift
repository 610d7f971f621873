import Foundation
import Logging
import PostgresNIO
import Testing

@testable import BeckonStore

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
/// `BECKON_TEST_POSTGRES_URL` is set (CI sets it): one suite, two stores (issue 13).
func withEachStore(clock: TestClock = TestClock(), _ body: (any BeckonStore) async throws -> Void) async throws {
    try await withStore(clock: clock) { store in try await body(store) }
    guard let url = postgresTestURL else { return }
    try await withFreshPostgresDatabase(url: url, clock: clock, body)
}

/// A database of its own for one test, dropped afterwards.
func withFreshPostgresDatabase(url: String, clock: TestClock, _ body: (any BeckonStore) async throws -> Void) async throws {
    let name = "beckon_test_\(UUID().uuidString.prefix(8).lowercased())"
    let admin = try PostgresStore(url: url, logger: Logger(label: "beckon.store.test"))
    try await withThrowingTaskGroup(of: Void.self) { tasks in
        tasks.addTask { await admin.run() }
        try await admin.client.query(PostgresQuery(unsafeSQL: "CREATE DATABASE \(name)"), logger: admin.logger)
        var components = URLComponents(string: url)!
        components.path = "/" + name
        let store = try PostgresStore(url: components.string!, logger: Logger(label: "beckon.store.test"), now: { clock.now })
        do {
            try await withThrowingTaskGroup(of: Void.self) { inner in
                inner.addTask { await store.run() }
                defer { inner.cancelAll() }
                try await store.migrate()
                try await body(store)
            }
        } catch {
            _ = try? await admin.client.query(PostgresQuery(unsafeSQL: "DROP DATABASE \(name) WITH (FORCE)"), logger: admin.logger)
            tasks.cancelAll()
            throw error
        }
        try await admin.client.query(PostgresQuery(unsafeSQL: "DROP DATABASE \(name) WITH (FORCE)"), logger: admin.logger)
        tasks.cancelAll()
    }
}
