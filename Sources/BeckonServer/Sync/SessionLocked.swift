#if os(Linux)
import Synchronization

/// The lock of one session's state. On Linux a `Mutex` stored inline in the session's object: a
/// boxed lock is one more allocation per idle session, about 0.15 KiB of the 7.4 KiB each costs
/// (docs/benchmarks-history.md, "Issue 9 refactor"). `Mutex` needs macOS 15, so other platforms box it.
typealias SessionLocked<Value> = Mutex<Value>

extension Mutex {
    /// `withLock`, under the name `NIOLockedValueBox` uses, so the two read the same.
    borrowing func withLockedValue<Result: Sendable>(_ body: (inout Value) throws -> Result) rethrows -> Result {
        try withLock { value in try body(&value) }
    }
}
#else
import NIOConcurrencyHelpers

typealias SessionLocked<Value> = NIOLockedValueBox<Value>
#endif
