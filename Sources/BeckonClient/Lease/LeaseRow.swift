/// The lease as stored: one row per key in the shared store (matrix-rust-sdk's
/// `cross_process_lock.rs` design, docs/design.md "A lease, not a held file lock"). Times are
/// milliseconds since 1970, read from the system clock by every process.
package struct LeaseRow: Hashable, Sendable {
    package var key: String
    /// Who holds it; nil once released.
    package var holder: String?
    /// Who held it last, released or not: a take by anyone else moves the generation.
    package var lastHolder: String?
    /// The lease is void after this unless renewed.
    package var expiresAt: Int64
    /// Moves whenever a different holder takes the lease: a holder that sees a new number knows
    /// another process wrote in between and its caches are stale.
    package var generation: Int64
    /// The main app asked for the lease (until `wantedUntil`): the holder yields, and no other
    /// extension may take it meanwhile.
    package var wantedBy: String?
    package var wantedUntil: Int64?

    package init(
        key: String, holder: String?, lastHolder: String?, expiresAt: Int64, generation: Int64,
        wantedBy: String? = nil, wantedUntil: Int64? = nil
    ) {
        self.key = key
        self.holder = holder
        self.lastHolder = lastHolder
        self.expiresAt = expiresAt
        self.generation = generation
        self.wantedBy = wantedBy
        self.wantedUntil = wantedUntil
    }

    /// Whether a request by someone other than `holder` is still standing at `now`.
    func isWanted(byOtherThan holder: String, at now: Int64) -> Bool {
        guard let wantedBy, wantedBy != holder, let wantedUntil else { return false }
        return wantedUntil >= now
    }
}
