import GRDB

extension ClientStore {
    /// Removes what `retention` no longer keeps, in one transaction (`StoreRetention` says what).
    @discardableResult
    package func prune(_ retention: StoreRetention, as writer: LeaseGuard) throws -> PruneOutcome {
        let now = nowMilliseconds
        let messageCutoff = now - retention.messageAge.milliseconds
        let recordCutoff = now - retention.recordAge.milliseconds
        return try write(as: writer) { db in
            var outcome = PruneOutcome()
            // Old (read, or past their age anyway) or expired, never a pending read marker's.
            try db.execute(
                sql: """
                    DELETE FROM message
                    WHERE (storedAt < ? OR (expiresAt IS NOT NULL AND expiresAt < ?))
                      AND (synced = 1 OR storedAt < ?)
                      AND id NOT IN (SELECT messageId FROM pendingRead)
                    """,
                arguments: [messageCutoff, now, recordCutoff])
            outcome.messages += db.changesCount
            // Beyond the newest `maximumMessages` synced: read ones first, then the oldest.
            let synced = try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM message WHERE synced = 1") ?? 0
            if synced > retention.maximumMessages {
                try db.execute(
                    sql: """
                        DELETE FROM message WHERE id IN (
                            SELECT id FROM message
                            WHERE synced = 1 AND id NOT IN (SELECT messageId FROM pendingRead)
                            ORDER BY isRead DESC, sequence ASC LIMIT ?)
                        """,
                    arguments: [synced - retention.maximumMessages])
                outcome.messages += db.changesCount
            }
            try db.execute(
                sql: """
                    DELETE FROM notificationLedger
                    WHERE shownAt < ? AND (state = 'removed' OR messageId NOT IN (SELECT id FROM message))
                    """,
                arguments: [recordCutoff])
            outcome.ledgerEntries = db.changesCount
            try db.execute(sql: "DELETE FROM call WHERE state = 'ended' AND updatedAt < ?", arguments: [recordCutoff])
            outcome.calls = db.changesCount
            try db.execute(sql: "UPDATE syncState SET prunedAt = ? WHERE id = 1", arguments: [now])
            return outcome
        }
    }

    /// Prunes if the last pruning was `retention.interval` ago or more; nil when not due.
    @discardableResult
    package func pruneIfDue(_ retention: StoreRetention, as writer: LeaseGuard) throws -> PruneOutcome? {
        let last = try read { db in try Int64.fetchOne(db, sql: "SELECT prunedAt FROM syncState WHERE id = 1") } ?? 0
        guard nowMilliseconds - last >= retention.interval.milliseconds else { return nil }
        return try prune(retention, as: writer)
    }

    /// Rows per table: what pruning bounds (tests, diagnostics).
    package func rowCounts() throws -> [String: Int] {
        try read { db in
            var counts: [String: Int] = [:]
            for table in ["message", "pendingRead", "notificationLedger", "call"] {
                counts[table] = try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM \(table)") ?? 0
            }
            return counts
        }
    }
}
