import Foundation

/// A value behind a mutex, shared between event loops and callers of the public API.
///
/// `Synchronization.Mutex` needs macOS 15; the package targets macOS 14, so this wraps `NSLock`.
final class Locked<Value>: @unchecked Sendable {
    private let lock = NSLock()
    private var value: Value

    init(_ value: Value) { self.value = value }

    @inline(__always)
    func withLock<Result>(_ body: (inout Value) throws -> Result) rethrows -> Result {
        lock.lock()
        defer { lock.unlock() }
        return try body(&value)
    }
}
