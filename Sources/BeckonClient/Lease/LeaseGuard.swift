/// Proof of holding the lease: the only way to write the shared store (`ClientStore.write(as:)`).
/// Release it when done; a guard dropped without release lets go too.
package final class LeaseGuard: Sendable {
    package let key: String
    package let holder: LeaseHolder
    /// The lease's generation when taken.
    package let generation: Int64
    /// Another process held the lease since this process last did: anything cached from the
    /// store (cursor, badge, ledger) must be read again.
    package let isDirty: Bool

    private let held = Locked(true)
    private let lock: LeaseLock
    let id: Int

    init(key: String, holder: LeaseHolder, generation: Int64, isDirty: Bool, lock: LeaseLock, id: Int) {
        self.key = key
        self.holder = holder
        self.generation = generation
        self.isDirty = isDirty
        self.lock = lock
        self.id = id
    }

    /// False once released, or once the lock lost the lease or yielded it to the app.
    package var isHeld: Bool { held.withLock { $0 } }

    package func release() async {
        guard invalidate() else { return }
        await lock.release(id)
    }

    /// Returns whether it was held.
    @discardableResult
    func invalidate() -> Bool {
        held.withLock { held in
            defer { held = false }
            return held
        }
    }

    deinit {
        if invalidate() {
            let lock = self.lock
            let id = self.id
            Task { await lock.release(id) }
        }
    }
}
