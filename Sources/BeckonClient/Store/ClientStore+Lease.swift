import GRDB

extension ClientStore {
    /// Takes or renews the lease (`LeaseRules.take`) in one transaction. An extension that does
    /// not get it keeps (or takes) its place in the queue; nil then.
    package func takeLease(key: String, holder: LeaseHolder, duration: Duration) throws -> LeaseGrant? {
        let now = nowMilliseconds
        // A waiter retries at most every `LeaseLock.Timing.retryMaximum`; one silent for longer
        // than this gave up or died, and loses its place.
        let waiterLifetime: Int64 = 1000
        return try transaction { db in
            let row = try Self.leaseRow(db, key: key)
            var olderWaiterAlive = false
            if !holder.hasPriority && row?.holder != holder.name {
                try db.execute(
                    sql: """
                        INSERT INTO leaseWaiter (key, holder, aliveUntil) VALUES (?, ?, ?)
                        ON CONFLICT (key, holder) DO UPDATE SET aliveUntil = excluded.aliveUntil
                        """,
                    arguments: [key, holder.name, now + waiterLifetime])
                olderWaiterAlive = try Bool.fetchOne(
                    db,
                    sql: """
                        SELECT EXISTS (SELECT 1 FROM leaseWaiter
                            WHERE key = ? AND aliveUntil >= ?
                            AND ticket < (SELECT ticket FROM leaseWaiter WHERE key = ? AND holder = ?))
                        """,
                    arguments: [key, now, key, holder.name]) ?? false
            }
            let decision = LeaseRules.take(
                row, key: key, by: holder, now: now, duration: duration.milliseconds, olderWaiterAlive: olderWaiterAlive)
            guard case .take(let newRow, let preemptionRequested) = decision else { return nil }
            try Self.save(newRow, db)
            try db.execute(sql: "DELETE FROM leaseWaiter WHERE key = ? AND holder = ?", arguments: [key, holder.name])
            return LeaseGrant(generation: newRow.generation, preemptionRequested: preemptionRequested)
        }
    }

    /// The app asks the holder to yield (`LeaseRules.request`).
    package func requestLease(key: String, holder: LeaseHolder, for duration: Duration) throws {
        let now = nowMilliseconds
        try transaction { db in
            if let row = LeaseRules.request(
                try Self.leaseRow(db, key: key), by: holder, now: now, until: now + duration.milliseconds)
            {
                try Self.save(row, db)
            }
        }
    }

    package func releaseLease(key: String, holder: LeaseHolder) throws {
        try transaction { db in
            if let row = LeaseRules.release(try Self.leaseRow(db, key: key), by: holder) { try Self.save(row, db) }
        }
    }

    /// Leaves the queue (an extension that stopped waiting).
    package func leaveLeaseQueue(key: String, holder: LeaseHolder) throws {
        try transaction { db in
            try db.execute(sql: "DELETE FROM leaseWaiter WHERE key = ? AND holder = ?", arguments: [key, holder.name])
        }
    }

    package func leaseRow(key: String) throws -> LeaseRow? {
        try readTransaction { db in try Self.leaseRow(db, key: key) }
    }

    static func leaseRow(_ db: Database, key: String) throws -> LeaseRow? {
        guard let row = try Row.fetchOne(db, sql: "SELECT * FROM lease WHERE key = ?", arguments: [key]) else { return nil }
        return LeaseRow(
            key: row["key"], holder: row["holder"], lastHolder: row["lastHolder"], expiresAt: row["expiresAt"],
            generation: row["generation"], wantedBy: row["wantedBy"], wantedUntil: row["wantedUntil"])
    }

    static func save(_ row: LeaseRow, _ db: Database) throws {
        try db.execute(
            sql: """
                INSERT INTO lease (key, holder, lastHolder, expiresAt, generation, wantedBy, wantedUntil)
                VALUES (?, ?, ?, ?, ?, ?, ?)
                ON CONFLICT (key) DO UPDATE SET holder = excluded.holder, lastHolder = excluded.lastHolder,
                    expiresAt = excluded.expiresAt, generation = excluded.generation,
                    wantedBy = excluded.wantedBy, wantedUntil = excluded.wantedUntil
                """,
            arguments: [row.key, row.holder, row.lastHolder, row.expiresAt, row.generation, row.wantedBy, row.wantedUntil])
    }
}

extension ClientStore {
    /// The extensions waiting for the lease, oldest first (diagnostics and tests).
    package func leaseWaiters(key: String) throws -> [String] {
        try readTransaction { db in
            try String.fetchAll(db, sql: "SELECT holder FROM leaseWaiter WHERE key = ? ORDER BY ticket", arguments: [key])
        }
    }
}
