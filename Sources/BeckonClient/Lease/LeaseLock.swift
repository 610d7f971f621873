import BeckonProtocol
import Foundation

/// One process's side of the cross-process lease (docs/design.md, "A lease, not a held file
/// lock"): a row in the shared store naming the holder, with an expiry about 500 ms ahead that
/// the holder renews about every 50 ms, and a generation that moves when another process takes
/// over. Nothing is held while the process is frozen: a suspended holder simply stops renewing
/// and its lease lapses.
///
/// The app has priority (seed 003's shared core): when it wants the lease it writes its request
/// in the row and nudges the holder over the process-signal port; an extension holder sees the
/// request at its next renewal (or at once, nudged), asks its work to stop (its sync session
/// closes), and lets go within `Timing.yieldTimeout`. Extension instances wait their turn in a
/// queue. Within one process holds are counted: the lease is released when the last guard is.
public actor LeaseLock {
    public struct Timing: Sendable {
        public var leaseDuration: Duration = .milliseconds(500)
        public var renewInterval: Duration = .milliseconds(50)
        /// How long a holder's work may take to stop once the app asked.
        public var yieldTimeout: Duration = .milliseconds(300)
        public var retryInitial: Duration = .milliseconds(10)
        public var retryMaximum: Duration = .milliseconds(200)

        public init() {}
    }

    /// Why a holder lost the lease before releasing it.
    package enum Revocation: Hashable, Sendable {
        /// The app asked for it.
        case preempted
        /// Another process took it (this one stopped renewing: frozen, or too slow).
        case lost
    }

    public nonisolated let holder: LeaseHolder
    package nonisolated let key: String
    let store: ClientStore
    let clock: any ClientClock
    let signal: (any ProcessSignalPort)?
    let timing: Timing

    private var guards: [Int: WeakGuard] = [:]
    private var nextGuardID = 0
    private var knownGeneration: Int64?
    /// Until when the last successful take or renewal holds the row for this process.
    private var heldUntil: Date?
    private var renewal: Task<Void, Never>?
    private var yielding = false
    private var revocationHandlers: [Int: @Sendable (Revocation) async -> Void] = [:]
    private var nextHandlerID = 0

    public init(
        store: ClientStore, holder: LeaseHolder, key: String = "writer", clock: any ClientClock,
        signal: (any ProcessSignalPort)? = nil, timing: Timing = Timing()
    ) {
        self.store = store
        self.holder = holder
        self.key = key
        self.clock = clock
        self.signal = signal
        self.timing = timing
    }

    /// The process-signal name the app posts when it wants the lease.
    package nonisolated var wantedSignal: String { "beckon.lease.wanted.\(key)" }

    /// Whether this process holds the lease now.
    package var isHolding: Bool { !guards.isEmpty }

    /// Takes the lease, waiting at most `timeout`. The app asks the holder to yield; an
    /// extension queues behind the holder and older waiters. Throws `LeaseError.timedOut`.
    package func acquire(timeout: Duration) async throws -> LeaseGuard {
        let deadline = clock.now().addingTimeInterval(timeout.timeInterval)
        var wait = timing.retryInitial
        while true {
            try Task.checkCancellation()
            if !yielding {
                if let existing = guards.values.first(where: { $0.value?.isHeld == true })?.value {
                    return makeGuard(generation: existing.generation, isDirty: false)
                }
                if let grant = try store.takeLease(key: key, holder: holder, duration: timing.leaseDuration) {
                    let isDirty = knownGeneration.map { $0 != grant.generation } ?? false
                    knownGeneration = grant.generation
                    heldUntil = clock.now().addingTimeInterval(timing.leaseDuration.timeInterval)
                    let leaseGuard = makeGuard(generation: grant.generation, isDirty: isDirty)
                    startRenewing()
                    return leaseGuard
                }
                if holder.hasPriority {
                    try store.requestLease(key: key, holder: holder, for: timing.leaseDuration * 2)
                    signal?.post(wantedSignal)
                }
            }
            let remaining = deadline.timeIntervalSince(clock.now())
            guard remaining > 0 else {
                if !holder.hasPriority { try? store.leaveLeaseQueue(key: key, holder: holder) }
                throw LeaseError.timedOut
            }
            try await clock.sleep(for: min(wait, .milliseconds(Int64((remaining * 1000).rounded(.up)))))
            wait = min(wait * 2, timing.retryMaximum)
        }
    }

    /// Runs `body` holding the lease, and releases it after.
    package func withLease<Result: Sendable>(
        timeout: Duration, _ body: @Sendable (LeaseGuard) async throws -> Result
    ) async throws -> Result {
        let leaseGuard = try await acquire(timeout: timeout)
        do {
            let result = try await body(leaseGuard)
            await leaseGuard.release()
            return result
        } catch {
            await leaseGuard.release()
            throw error
        }
    }

    /// Called when the lease is taken from this process (the app asked, or another process took
    /// it): the work holding guards must stop and release them.
    @discardableResult
    package func onRevocation(_ handler: @escaping @Sendable (Revocation) async -> Void) -> Int {
        nextHandlerID += 1
        revocationHandlers[nextHandlerID] = handler
        return nextHandlerID
    }

    package func removeRevocationHandler(_ id: Int) {
        revocationHandlers[id] = nil
    }

    // MARK: Holding

    private func makeGuard(generation: Int64, isDirty: Bool) -> LeaseGuard {
        nextGuardID += 1
        let leaseGuard = LeaseGuard(
            key: key, holder: holder, generation: generation, isDirty: isDirty, lock: self, id: nextGuardID)
        guards[nextGuardID] = WeakGuard(leaseGuard)
        return leaseGuard
    }

    func release(_ id: Int) {
        guards[id] = nil
        if guards.isEmpty { letGo() }
    }

    private func letGo() {
        renewal?.cancel()
        renewal = nil
        try? store.releaseLease(key: key, holder: holder)
    }

    private func startRenewing() {
        guard renewal == nil else { return }
        let signals = holder.hasPriority ? nil : signal?.signals(named: wantedSignal)
        renewal = Task { [weak self, timing, clock] in
            await withTaskGroup(of: Void.self) { group in
                group.addTask {
                    while !Task.isCancelled {
                        do { try await clock.sleep(for: timing.renewInterval) } catch { return }
                        guard let self, await self.renew() else { return }
                    }
                }
                if let signals {
                    // The app's nudge: look at the row now rather than at the next renewal.
                    group.addTask {
                        for await _ in signals {
                            guard let self, await self.renew() else { return }
                        }
                    }
                }
                await group.next()
                group.cancelAll()
            }
        }
    }

    /// One renewal; false once there is nothing left to renew.
    private func renew() async -> Bool {
        guard !guards.isEmpty else { return false }
        guard !yielding else { return true }
        let grant: LeaseGrant?
        do {
            grant = try store.takeLease(key: key, holder: holder, duration: timing.leaseDuration)
        } catch {
            // The write failed (the file busy past the timeout, the store suspended for a
            // moment): that says nothing about who holds the row. Keep trying while the last
            // renewal still covers us; only once it has run out may another process have it.
            if let heldUntil, clock.now() < heldUntil { return true }
            await revoke(.lost, releaseRow: false)
            return false
        }
        guard let grant, grant.generation == knownGeneration else {
            // Someone else holds it now (this process was frozen past its expiry): every guard
            // is void, and the store refuses their writes already (`ClientStore.write(as:)`).
            await revoke(.lost, releaseRow: false)
            return false
        }
        heldUntil = clock.now().addingTimeInterval(timing.leaseDuration.timeInterval)
        if grant.preemptionRequested {
            await yieldToApp()
            return !guards.isEmpty
        }
        return true
    }

    /// The app asked: ask the work to stop, give it `yieldTimeout` to release its guards, then
    /// let go regardless (the store refuses a straggler's writes once the row names another).
    private func yieldToApp() async {
        yielding = true
        defer { yielding = false }
        for handler in revocationHandlers.values {
            Task { await handler(.preempted) }
        }
        var waited = Duration.zero
        while !guards.isEmpty && waited < timing.yieldTimeout {
            try? await clock.sleep(for: timing.renewInterval)
            waited += timing.renewInterval
        }
        if !guards.isEmpty { await revoke(.preempted, releaseRow: true, notify: false) }
    }

    private func revoke(_ reason: Revocation, releaseRow: Bool, notify: Bool = true) async {
        for weakGuard in guards.values { weakGuard.value?.invalidate() }
        guards.removeAll()
        renewal?.cancel()
        renewal = nil
        if releaseRow { try? store.releaseLease(key: key, holder: holder) }
        if notify {
            for handler in revocationHandlers.values { Task { await handler(reason) } }
        }
    }
}

private struct WeakGuard {
    weak var value: LeaseGuard?
    init(_ value: LeaseGuard) { self.value = value }
}
