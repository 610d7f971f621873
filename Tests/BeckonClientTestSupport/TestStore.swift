import BeckonClient
import Foundation

/// A store in a fresh temporary directory, removed when the test is done.
package struct TestStore: Sendable {
    package let directory: URL
    package let path: String

    package init() throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("beckon-client-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        path = directory.appendingPathComponent("client.sqlite").path
    }

    package func open(clock: any ClientClock, observesSuspension: Bool = false) throws -> ClientStore {
        try ClientStore(path: path, clock: clock, observesSuspension: observesSuspension)
    }

    package func remove() {
        try? FileManager.default.removeItem(at: directory)
    }

    /// A store with its lease taken by an app holder: what most tests write through.
    package static func withWriter<Result>(
        clock: ManualClock = ManualClock(), _ body: (ClientStore, LeaseGuard, LeaseLock) async throws -> Result
    ) async throws -> Result {
        let test = try TestStore()
        defer { test.remove() }
        let store = try test.open(clock: clock)
        let lock = LeaseLock(store: store, holder: LeaseHolder(role: .app), clock: clock)
        let writer = try await lock.acquire(timeout: .seconds(1))
        let result = try await body(store, writer, lock)
        await writer.release()
        return result
    }
}
