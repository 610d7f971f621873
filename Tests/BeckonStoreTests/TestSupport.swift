import Foundation
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
