import BeckonClient
import BeckonClientTestSupport
import BeckonProtocol
import Foundation
import TestCapture
import Testing

/// The lease between two real processes sharing one SQLite file: this test process plays the
/// app (or a second extension), `BeckonClientLockProbe` the other side. Real clocks; waits are
/// bounded generously, nothing is timed.
@Suite(.serialized) struct CrossProcessLeaseTests {
    @Test func theAppPreemptsAnExtensionInAnotherProcess() async throws {
        let test = try TestStore()
        defer { test.remove() }
        let store = try test.open(clock: SystemClock())
        let probe = try ProbeProcess(database: test.path, role: "extension", ["hold"])
        let acquired = try await probe.line("acquired")
        let app = LeaseLock(store: store, holder: LeaseHolder(role: .app), clock: SystemClock())
        let writer = try await app.acquire(timeout: .seconds(10))
        try await probe.line("revoked preempted")
        try await probe.line("commit accepted")  // it committed before it let go
        try await probe.line("released")
        #expect(try await probe.waitForExit() == .exited(0))
        #expect(writer.generation == ProbeProcess.generation(acquired)! + 1)
        #expect(try store.leaseRow(key: "writer")?.holder == app.holder.name)
        try store.setBadge(7, as: writer)
        await writer.release()
    }

    @Test func aKilledHoldersLeaseExpiresAndTheNextTakesOverWithANewGeneration() async throws {
        let test = try TestStore()
        defer { test.remove() }
        let store = try test.open(clock: SystemClock())
        let probe = try ProbeProcess(database: test.path, role: "extension", ["hold"])
        let acquired = try await probe.line("acquired")
        probe.signal(SIGKILL)
        #expect(try await probe.waitForExit() == .signalled(SIGKILL))
        // The dead process's row still names it until its expiry passes.
        let next = LeaseLock(store: store, holder: LeaseHolder(role: .extension), clock: SystemClock())
        let writer = try await next.acquire(timeout: .seconds(10))
        #expect(writer.generation == ProbeProcess.generation(acquired)! + 1)
        try store.setBadge(1, as: writer)
        await writer.release()
    }

    @Test func aFrozenHolderHoldsNoLockAndLearnsItLostTheLease() async throws {
        // SIGSTOP is what iOS does to a suspended process: it holds no file lock (no
        // 0xdead10cc), its lease simply lapses.
        let test = try TestStore()
        defer { test.remove() }
        let store = try test.open(clock: SystemClock())
        let probe = try ProbeProcess(database: test.path, role: "extension", ["hold"])
        try await probe.line("acquired")
        try await probe.stop()
        let app = LeaseLock(store: store, holder: LeaseHolder(role: .app), clock: SystemClock())
        let writer = try await app.acquire(timeout: .seconds(10))
        try store.setBadge(5, as: writer)
        probe.signal(SIGCONT)
        // Woken, it learns it lost the lease: from its lock ("revoked lost", then its commit is
        // refused) or from its next write ("write refused"), whichever runs first. On a loaded
        // machine the write may come first and the lock's own word not within a minute: what
        // this test holds to is that the woken process writes nothing over the app.
        try await eventually("the woken probe to learn it lost the lease (got \(probe.lines))", timeout: .seconds(60)) {
            probe.lines.contains { $0 == "revoked lost" || $0 == "write refused" }
        }
        if probe.lines.contains("revoked lost") { try await probe.line("commit refused") }
        #expect(!probe.lines.contains("commit accepted"))
        #expect(!probe.lines.contains("revoked preempted"), "it was frozen, not asked")
        #expect(try store.badge() == 5, "the woken process wrote nothing over it")
        if probe.process.isRunning { probe.signal(SIGKILL) }
        _ = try await probe.waitForExit()
        await writer.release()
    }

    @Test func theGenerationMovesWhenAnotherProcessHeldTheLease() async throws {
        let test = try TestStore()
        defer { test.remove() }
        let store = try test.open(clock: SystemClock())
        let here = LeaseLock(store: store, holder: LeaseHolder(role: .extension), clock: SystemClock())
        let first = try await here.acquire(timeout: .seconds(10))
        #expect(first.generation == 1 && !first.isDirty)
        await first.release()

        let probe = try ProbeProcess(database: test.path, role: "extension", ["take"])
        let line = try await probe.line("acquired")
        #expect(ProbeProcess.generation(line) == 2)
        #expect(line.hasSuffix("dirty=false"), "a new process has no caches")
        #expect(try await probe.waitForExit() == .exited(0))

        let again = try await here.acquire(timeout: .seconds(10))
        #expect(again.generation == 3)
        #expect(again.isDirty, "another process wrote in between: drop caches")
        await again.release()
    }

    @Test func anExtensionWaitsForAnotherProcessToFinish() async throws {
        let test = try TestStore()
        defer { test.remove() }
        let store = try test.open(clock: SystemClock())
        let probe = try ProbeProcess(database: test.path, role: "extension", ["hold", "300"])
        let acquired = try await probe.line("acquired")
        let here = LeaseLock(store: store, holder: LeaseHolder(role: .extension), clock: SystemClock())
        let writer = try await here.acquire(timeout: .seconds(10))
        // It got the lease only once the other had finished: the other's last commit went in.
        try await probe.line("commit accepted")
        #expect(try store.badge() == 0, "the other's last write (-1, stored as 0) is in")
        #expect(writer.generation == ProbeProcess.generation(acquired)! + 1)
        #expect(try await probe.waitForExit() == .exited(0))
        await writer.release()
    }
}
