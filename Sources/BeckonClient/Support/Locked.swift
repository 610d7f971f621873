import Foundation

/// A value behind a lock, for the few places a synchronous call must share state: iOS calls the
/// PushKit handler synchronously (apns.md E.6), and the manual clock is read from any task.
/// Everything else in the SDK is an actor.
package final class Locked<Value>: @unchecked Sendable {
    private let lock = NSLock()
    private var value: Value

    package init(_ value: Value) { self.value = value }

    package func withLock<Result>(_ body: (inout Value) throws -> Result) rethrows -> Result {
        lock.lock()
        defer { lock.unlock() }
        return try body(&value)
    }
}
