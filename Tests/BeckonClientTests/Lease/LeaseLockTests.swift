import BeckonClient
import BeckonClientTestSupport
import BeckonProtocol
import Foundation
import Testing

/// The lease between processes, played in one process: each lock is one process's side, all
/// over one store file. Sleeps run on manual clocks; a lock whose clock never moves is a
/// process iOS froze.
@Suite struct LeaseLockTests {
    final class Revocations: @unchecked Sendable {
        private let lock = NSLockBox()
        private var _reasons: [LeaseLock.Revocation] = []
        var reasons: [LeaseLock.Revocation] { lock.run { _reasons } }
        func record(_ reason: LeaseLock.Revocation) { lock.run { _reasons.append(reason) } }
    }

    struct Setup {
        let test: TestStore
        let clock: ManualClock
        let store: ClientStore
        let signal: LocalProcessSignal

        init() throws {
            test = try TestStore()
            clock = ManualClock()
            store = try test.open(clock: clock)
            signal = LocalProcessSignal()
        }

        func lock(_ role: SyncRole, clock: ManualClock? = nil) -> LeaseLock {
            LeaseLock(store: store, holder: LeaseHolder(role: role), clock: clock ?? self.clock, signal: signal)
        }
    }

    @Test func theAppPreemptsAnExtensionThatYields() async throws {
        let setup = try Setup()
        defer { setup.test.remove() }
        let nse = setup.lock(.extension)
        let app = setup.lock(.app)
        let nseWriter = try await nse.acquire(timeout: .seconds(1))
        let revocations = Revocations()
        await nse.onRevocation { reason in
            revocations.record(reason)
            // The extension's work: commit, stop the session, let go.
            await nseWriter.release()
        }
        let appAcquire = Task { try await app.acquire(timeout: .seconds(30)) }
        try await setup.clock.advance(by: .milliseconds(10), until: "the app holds the lease") {
            try setup.store.leaseRow(key: "writer")?.holder == app.holder.name
        }
        let appWriter = try await appAcquire.value
        #expect(revocations.reasons == [.preempted])
        #expect(!nseWriter.isHeld)
        #expect(appWriter.generation == 2)
        #expect(try setup.store.leaseRow(key: "writer")?.wantedBy == nil)
        await appWriter.release()
    }

    @Test func anExtensionThatDoesNotYieldInTimeIsCutOff() async throws {
        let setup = try Setup()
        defer { setup.test.remove() }
        let nse = setup.lock(.extension)
        let app = setup.lock(.app)
        let stubborn = try await nse.acquire(timeout: .seconds(1))
        await nse.onRevocation { _ in }  // never releases
        let appAcquire = Task { try await app.acquire(timeout: .seconds(30)) }
        try await setup.clock.advance(by: .milliseconds(10), until: "the app holds the lease") {
            try setup.store.leaseRow(key: "writer")?.holder == app.holder.name
        }
        let appWriter = try await appAcquire.value
        #expect(!stubborn.isHeld, "cut off after the yield timeout")
        #expect(throws: ClientStoreError.notLeaseHolder) { try setup.store.setBadge(1, as: stubborn) }
        await appWriter.release()
    }

    @Test func extensionInstancesTakeTurnsInOrder() async throws {
        let setup = try Setup()
        defer { setup.test.remove() }
        let first = setup.lock(.extension)
        let second = setup.lock(.extension)
        let third = setup.lock(.extension)
        let holding = try await first.acquire(timeout: .seconds(1))
        let secondAcquire = Task { try await second.acquire(timeout: .seconds(60)) }
        try await eventually("second queued") { try setup.store.leaseWaiters(key: "writer") == [second.holder.name] }
        let thirdAcquire = Task { try await third.acquire(timeout: .seconds(60)) }
        try await eventually("third queued") { try setup.store.leaseWaiters(key: "writer").count == 2 }
        await holding.release()
        try await setup.clock.advance(by: .milliseconds(10), until: "the next one holds it") {
            try setup.store.leaseRow(key: "writer")?.holder != nil
        }
        #expect(try setup.store.leaseRow(key: "writer")?.holder == second.holder.name, "the older waiter first")
        let secondWriter = try await secondAcquire.value
        await secondWriter.release()
        try await setup.clock.advance(by: .milliseconds(10), until: "the third holds it") {
            try setup.store.leaseRow(key: "writer")?.holder == third.holder.name
        }
        await (try thirdAcquire.value).release()
    }

    @Test func theGenerationTellsAReturningHolderItsCachesAreStale() async throws {
        let setup = try Setup()
        defer { setup.test.remove() }
        let app = setup.lock(.app)
        let nse = setup.lock(.extension)
        let a1 = try await app.acquire(timeout: .seconds(1))
        #expect(!a1.isDirty && a1.generation == 1)
        await a1.release()
        let a2 = try await app.acquire(timeout: .seconds(1))
        #expect(!a2.isDirty && a2.generation == 1, "nobody else wrote in between")
        await a2.release()
        let n1 = try await nse.acquire(timeout: .seconds(1))
        #expect(n1.generation == 2)
        await n1.release()
        let a3 = try await app.acquire(timeout: .seconds(1))
        #expect(a3.isDirty && a3.generation == 3)
        await a3.release()
    }

    @Test func aFrozenHoldersLeaseLapsesAndItLearnsSoOnWaking() async throws {
        let setup = try Setup()
        defer { setup.test.remove() }
        let frozenClock = ManualClock()
        let frozen = setup.lock(.extension, clock: frozenClock)
        let revocations = Revocations()
        await frozen.onRevocation { revocations.record($0) }
        let stale = try await frozen.acquire(timeout: .seconds(1))
        setup.clock.advance(by: .milliseconds(600))
        let app = setup.lock(.app)
        let appWriter = try await app.acquire(timeout: .seconds(1))
        #expect(appWriter.generation == 2)
        // The frozen process wakes: its next renewal finds another holder.
        try await frozenClock.advance(by: .milliseconds(50), until: "revoked") { revocations.reasons == [.lost] }
        #expect(!stale.isHeld)
        #expect(try setup.store.leaseRow(key: "writer")?.holder == app.holder.name, "the waking one takes nothing")
        await appWriter.release()
    }

    @Test func holdsInOneProcessAreCountedAndTheLastReleaseLetsGo() async throws {
        let setup = try Setup()
        defer { setup.test.remove() }
        let app = setup.lock(.app)
        let one = try await app.acquire(timeout: .seconds(1))
        let two = try await app.acquire(timeout: .seconds(1))
        await one.release()
        #expect(try setup.store.leaseRow(key: "writer")?.holder == app.holder.name)
        await two.release()
        #expect(try setup.store.leaseRow(key: "writer")?.holder == nil)
    }

    @Test func aDroppedGuardLetsGo() async throws {
        let setup = try Setup()
        defer { setup.test.remove() }
        let app = setup.lock(.app)
        do { _ = try await app.acquire(timeout: .seconds(1)) }
        try await eventually("released") { try setup.store.leaseRow(key: "writer")?.holder == nil }
    }

    @Test func anExtensionGivesUpAfterItsTimeoutAndLeavesTheQueue() async throws {
        let setup = try Setup()
        defer { setup.test.remove() }
        let app = setup.lock(.app)
        let nse = setup.lock(.extension)
        let appWriter = try await app.acquire(timeout: .seconds(1))
        let finished = Flag()
        let attempt = Task {
            defer { finished.set() }
            return try await nse.acquire(timeout: .milliseconds(500))
        }
        try await eventually("queued") { try setup.store.leaseWaiters(key: "writer").count == 1 }
        try await setup.clock.advance(by: .milliseconds(50), until: "gave up") { finished.isSet }
        await #expect(throws: LeaseError.timedOut) { try await attempt.value }
        #expect(try setup.store.leaseWaiters(key: "writer").isEmpty)
        await appWriter.release()
    }
}

final class Flag: @unchecked Sendable {
    private let lock = NSLockBox()
    private var value = false
    var isSet: Bool { lock.run { value } }
    func set() { lock.run { value = true } }
}
