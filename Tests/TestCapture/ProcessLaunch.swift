import Foundation

/// Every child process the tests start, started one at a time. Foundation's `Process.run()` on
/// Linux crashed (a bad `memcpy` inside it) when two tests of the one test process launched at
/// once: first two CLI tests (CI, 2026-11-24), then a CLI test beside the lease tests' probe
/// (CI, 2026-11-25). A lock per suite was not enough; this one is the whole process's.
public enum ProcessLaunch {
    private static let lock = NSLock()

    public static func run(_ process: Process) throws {
        lock.lock()
        defer { lock.unlock() }
        try process.run()
    }
}
