/// The lease's decisions, pure: given the row as it is, who asks and the time, what the row
/// becomes. `ClientStore+Lease` runs them inside one write transaction, which SQLite serialises
/// across processes, so the decision and its write are atomic.
package enum LeaseRules {
    package enum TakeDecision: Hashable, Sendable {
        /// The row to write. `preemptionRequested`: the app has asked for it; yield soon.
        case take(LeaseRow, preemptionRequested: Bool)
        case busy
    }

    /// `holder` takes or renews the lease for `duration` milliseconds.
    ///
    /// - A holder renews its own lease even after it expired, as long as nobody took it since.
    /// - A free or expired lease goes to the taker, unless the app has asked for it (then only
    ///   the app), or, for an extension, unless an older extension is still waiting in the
    ///   queue (`olderWaiterAlive`): extension instances take turns.
    /// - The generation moves only when the taker is not the last holder.
    package static func take(
        _ row: LeaseRow?, key: String, by holder: LeaseHolder, now: Int64, duration: Int64, olderWaiterAlive: Bool
    ) -> TakeDecision {
        guard var row else {
            return .take(
                LeaseRow(key: key, holder: holder.name, lastHolder: holder.name, expiresAt: now + duration, generation: 1),
                preemptionRequested: false)
        }
        if row.holder == holder.name {
            row.expiresAt = now + duration
            return .take(row, preemptionRequested: row.isWanted(byOtherThan: holder.name, at: now))
        }
        let free = row.holder == nil || row.expiresAt < now
        guard free else { return .busy }
        if row.isWanted(byOtherThan: holder.name, at: now) { return .busy }
        if !holder.hasPriority && olderWaiterAlive { return .busy }
        if row.lastHolder != holder.name { row.generation += 1 }
        row.holder = holder.name
        row.lastHolder = holder.name
        row.expiresAt = now + duration
        // Any request left is the taker's own, or has lapsed.
        row.wantedBy = nil
        row.wantedUntil = nil
        return .take(row, preemptionRequested: false)
    }

    /// The app asks for the lease until `until`. Nil when there is nothing to write: no row yet
    /// (the next take simply succeeds), or another standing request.
    package static func request(_ row: LeaseRow?, by holder: LeaseHolder, now: Int64, until: Int64) -> LeaseRow? {
        guard holder.hasPriority, var row, row.holder != holder.name else { return nil }
        if row.isWanted(byOtherThan: holder.name, at: now) { return nil }
        row.wantedBy = holder.name
        row.wantedUntil = until
        return row
    }

    /// The holder lets go. The row keeps `lastHolder`, so taking it again costs no generation.
    package static func release(_ row: LeaseRow?, by holder: LeaseHolder) -> LeaseRow? {
        guard var row, row.holder == holder.name else { return nil }
        row.holder = nil
        row.expiresAt = 0
        return row
    }
}
