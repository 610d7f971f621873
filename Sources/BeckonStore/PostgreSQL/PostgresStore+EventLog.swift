import Foundation
import PostgresNIO

/// The log is read by (tx, seq) and only below the oldest running transaction's id: sequence
/// numbers are taken in one order and committed in another, and that part of the log alone no
/// longer changes (EventPosition).
extension PostgresStore: EventLog {
    public func setEventLogApps(_ appIDs: Set<String>, now: Date) async throws {
        let apps = Array(appIDs)
        try await transaction { connection in
            try await connection.query(
                """
                WITH gone AS (DELETE FROM event_stream WHERE NOT (app_id = ANY(\(apps)::text[])) RETURNING app_id),
                     events AS (DELETE FROM message_event WHERE app_id IN (SELECT app_id FROM gone))
                DELETE FROM webhook_attempt WHERE app_id IN (SELECT app_id FROM gone)
                """, logger: logger)
            // A new log starts at the end of the settled part: nothing before it was written.
            try await connection.query(
                """
                INSERT INTO event_stream (app_id, cursor_tx, cursor_seq, expired_through)
                SELECT a, pg_snapshot_xmin(pg_current_snapshot()), 0, \(now.millisecondsSince1970)
                FROM unnest(\(apps)::text[]) AS a
                ON CONFLICT (app_id) DO NOTHING
                """, logger: logger)
        }
    }

    public func events(appID: String, after position: EventPosition, limit: Int) async throws -> [MessageEvent] {
        var events: [MessageEvent] = []
        for try await (seq, tx, kind, messageID, userID, deviceID, pushID, apnsID, status, reason, at) in try await client.query(
            """
            SELECT seq, tx::text::bigint, kind, message_id, user_id, device_id, push_id, apns_id, status, reason, at
            FROM message_event
            WHERE app_id = \(appID) AND (tx, seq) > (\(String(position.transaction))::xid8, \(position.sequence))
              AND tx < pg_snapshot_xmin(pg_current_snapshot())
            ORDER BY tx, seq LIMIT \(limit)
            """, logger: logger
        ).decode((Int64, Int64, String, String?, String?, String?, String?, String?, Int?, String?, Int64).self) {
            guard let kind = MessageEvent.Kind(rawValue: kind) else { continue }
            events.append(MessageEvent(
                position: EventPosition(transaction: tx, sequence: seq), appID: appID, kind: kind, messageID: messageID,
                userID: userID, deviceID: deviceID, pushID: pushID, apnsID: apnsID, status: status, reason: reason,
                at: Date(millisecondsSince1970: at)))
        }
        return events
    }

    public func eventPosition(appID: String, id: Int64) async throws -> EventPosition? {
        try await position(
            "SELECT tx::text::bigint, seq FROM message_event WHERE app_id = \(appID) AND seq = \(id)")
    }

    public func eventPosition(appID: String, before date: Date) async throws -> EventPosition {
        let settled: PostgresQuery = """
            SELECT tx::text::bigint, seq - 1 FROM message_event
            WHERE app_id = \(appID) AND at >= \(date.millisecondsSince1970) AND tx < pg_snapshot_xmin(pg_current_snapshot())
            ORDER BY tx, seq LIMIT 1
            """
        if let first = try await position(settled) { return first }
        return try await position(
            """
            SELECT tx::text::bigint, seq FROM message_event WHERE app_id = \(appID) AND tx < pg_snapshot_xmin(pg_current_snapshot())
            ORDER BY tx DESC, seq DESC LIMIT 1
            """) ?? .start
    }

    public func leaseWebhook(appID: String, node: String, until: Date, now: Date) async throws -> EventPosition? {
        try await position(
            """
            UPDATE event_stream SET leased_by = \(node), lease_until = \(until.millisecondsSince1970)
            WHERE app_id = \(appID) AND (leased_by IS NULL OR leased_by = \(node) OR lease_until < \(now.millisecondsSince1970))
            RETURNING cursor_tx::text::bigint, cursor_seq
            """)
    }

    public func webhookCursor(appID: String, node: String, now: Date) async throws -> EventPosition? {
        try await position(
            """
            SELECT cursor_tx::text::bigint, cursor_seq FROM event_stream
            WHERE app_id = \(appID) AND leased_by = \(node) AND lease_until >= \(now.millisecondsSince1970)
            """)
    }

    public func advanceWebhook(appID: String, node: String, to position: EventPosition, attempt: WebhookAttempt) async throws -> Bool {
        try await transaction { connection in
            let moved = try await Self.hasRow(connection.query(
                """
                UPDATE event_stream SET (cursor_tx, cursor_seq) = (\(String(position.transaction))::xid8, \(position.sequence))
                WHERE app_id = \(appID) AND leased_by = \(node)
                  AND (cursor_tx, cursor_seq) < (\(String(position.transaction))::xid8, \(position.sequence))
                RETURNING 1
                """, logger: logger))
            if moved { try await connection.query(Self.insertQuery(attempt), logger: logger) }
            return moved
        }
    }

    public func recordWebhookAttempt(_ attempt: WebhookAttempt) async throws {
        try await client.query(Self.insertQuery(attempt), logger: logger)
    }

    public func webhookAttempts(appID: String, limit: Int) async throws -> [WebhookAttempt] {
        var attempts: [WebhookAttempt] = []
        for try await row in try await client.query(
            """
            SELECT id, at, first_event, last_event, events, status, error, duration_ms
            FROM webhook_attempt WHERE app_id = \(appID) ORDER BY id DESC LIMIT \(limit)
            """, logger: logger
        ).decode((Int64, Int64, Int64, Int64, Int, Int, String?, Int64).self) {
            attempts.append(WebhookAttempt(
                id: row.0, appID: appID, at: Date(millisecondsSince1970: row.1), firstEvent: row.2, lastEvent: row.3,
                events: row.4, status: row.5, error: row.6, duration: TimeInterval(row.7) / 1000))
        }
        return attempts
    }

    public func rewindWebhook(appID: String, to position: EventPosition) async throws {
        try await client.query(
            """
            UPDATE event_stream SET (cursor_tx, cursor_seq) = (\(String(position.transaction))::xid8, \(position.sequence))
            WHERE app_id = \(appID) AND (cursor_tx, cursor_seq) > (\(String(position.transaction))::xid8, \(position.sequence))
            """, logger: logger)
    }

    public func recordExpiredEvents(appID: String, now: Date) async throws -> Int {
        let upTo = now.millisecondsSince1970
        return try await transaction { connection in
            var through: Int64?
            for try await value in try await connection.query(
                "SELECT expired_through FROM event_stream WHERE app_id = \(appID) FOR UPDATE", logger: logger
            ).decode(Int64.self) {
                through = value
            }
            guard let through, upTo > through else { return 0 }
            // The devices of each recipient that have no `synced` receipt: the sync skips an
            // expired message, so none comes after this (`recordSynced`).
            var written = 0
            for try await _ in try await connection.query(
                """
                INSERT INTO message_event (app_id, kind, message_id, user_id, device_id, at)
                SELECT m.app_id, 'expired', m.id, mb.user_id, d.id, m.expires_at
                FROM message m
                JOIN mailbox mb ON mb.message_id = m.id AND mb.app_id = m.app_id
                JOIN device d ON d.app_id = m.app_id AND d.user_id = mb.user_id
                WHERE m.app_id = \(appID) AND m.expires_at > \(through) AND m.expires_at <= \(upTo)
                  AND NOT EXISTS (SELECT 1 FROM message_receipt r WHERE r.message_id = m.id AND r.app_id = m.app_id
                                  AND r.device_id = d.id AND r.kind = 'synced')
                ORDER BY m.expires_at, m.id, d.id
                RETURNING 1
                """, logger: logger
            ).decode(Int.self) {
                written += 1
            }
            try await connection.query(
                "UPDATE event_stream SET expired_through = \(upTo) WHERE app_id = \(appID)", logger: logger)
            return written
        }
    }

    public func trimEventLog(appID: String, backlog: Int, sentBefore: Date) async throws -> Int {
        let cutoff = sentBefore.millisecondsSince1970
        return try await transaction { connection in
            var cursor: EventPosition?
            for try await (tx, seq) in try await connection.query(
                "SELECT cursor_tx::text::bigint, cursor_seq FROM event_stream WHERE app_id = \(appID) FOR UPDATE", logger: logger
            ).decode((Int64, Int64).self) {
                cursor = EventPosition(transaction: tx, sequence: seq)
            }
            guard let cursor else { return 0 }
            let (cursorTX, cursorSeq) = (String(cursor.transaction), cursor.sequence)
            try await connection.query(
                """
                DELETE FROM message_event WHERE app_id = \(appID) AND (tx, seq) <= (\(cursorTX)::xid8, \(cursorSeq)) AND at < \(cutoff)
                """, logger: logger)
            try await connection.query(
                "DELETE FROM webhook_attempt WHERE app_id = \(appID) AND at < \(cutoff)", logger: logger)
            // The oldest waiting events beyond the backlog go unsent: the cursor moves past them.
            var newCursor: EventPosition?
            for try await (tx, seq) in try await connection.query(
                """
                SELECT tx::text::bigint, seq FROM message_event
                WHERE app_id = \(appID) AND (tx, seq) > (\(cursorTX)::xid8, \(cursorSeq))
                  AND tx < pg_snapshot_xmin(pg_current_snapshot())
                ORDER BY tx DESC, seq DESC OFFSET \(backlog) LIMIT 1
                """, logger: logger
            ).decode((Int64, Int64).self) {
                newCursor = EventPosition(transaction: tx, sequence: seq)
            }
            guard let newCursor else { return 0 }
            let (newTX, newSeq) = (String(newCursor.transaction), newCursor.sequence)
            var dropped = 0
            for try await count in try await connection.query(
                """
                WITH gone AS (
                    DELETE FROM message_event WHERE app_id = \(appID)
                      AND (tx, seq) > (\(cursorTX)::xid8, \(cursorSeq)) AND (tx, seq) <= (\(newTX)::xid8, \(newSeq))
                    RETURNING 1)
                SELECT count(*)::integer FROM gone
                """, logger: logger
            ).decode(Int.self) {
                dropped = count
            }
            try await connection.query(
                """
                UPDATE event_stream SET (cursor_tx, cursor_seq) = (\(newTX)::xid8, \(newSeq)), dropped = dropped + \(dropped)
                WHERE app_id = \(appID)
                """, logger: logger)
            return dropped
        }
    }

    public func eventLogStatus(appID: String, now: Date) async throws -> EventLogStatus? {
        var found: (cursor: EventPosition, dropped: Int, sender: String?, leaseUntil: Int64?)?
        for try await (tx, seq, dropped, sender, leaseUntil) in try await client.query(
            "SELECT cursor_tx::text::bigint, cursor_seq, dropped, leased_by, lease_until FROM event_stream WHERE app_id = \(appID)",
            logger: logger
        ).decode((Int64, Int64, Int, String?, Int64?).self) {
            found = (EventPosition(transaction: tx, sequence: seq), dropped, sender, leaseUntil)
        }
        guard let found else { return nil }
        var behind = 0
        var oldest: Int64?
        for try await (count, at) in try await client.query(
            """
            SELECT count(*)::integer, min(at) FROM message_event
            WHERE app_id = \(appID) AND (tx, seq) > (\(String(found.cursor.transaction))::xid8, \(found.cursor.sequence))
            """, logger: logger
        ).decode((Int, Int64?).self) {
            (behind, oldest) = (count, at)
        }
        let leased = found.leaseUntil.map { $0 >= now.millisecondsSince1970 } == true
        return EventLogStatus(
            appID: appID, cursor: found.cursor, behind: behind, oldestWaiting: oldest.map(Date.init(millisecondsSince1970:)),
            dropped: found.dropped, sender: leased ? found.sender : nil,
            lastAttempt: try await webhookAttempts(appID: appID, limit: 1).first)
    }

    private func position(_ query: PostgresQuery) async throws -> EventPosition? {
        for try await (tx, seq) in try await client.query(query, logger: logger).decode((Int64, Int64).self) {
            return EventPosition(transaction: tx, sequence: seq)
        }
        return nil
    }

    private static func insertQuery(_ attempt: WebhookAttempt) -> PostgresQuery {
        """
        INSERT INTO webhook_attempt (app_id, at, first_event, last_event, events, status, error, duration_ms)
        VALUES (\(attempt.appID), \(attempt.at.millisecondsSince1970), \(attempt.firstEvent), \(attempt.lastEvent),
                \(attempt.events), \(attempt.status), \(attempt.error), \(Int64((attempt.duration * 1000).rounded())))
        """
    }
}
