import Foundation
import GRDB

extension SQLiteStore: EventLog {
    /// The triggers that write the events, in the transaction of the row each tells of, for the
    /// apps in `event_stream` (docs/webhooks.md, "Where events come from"). They exist only while
    /// some app's log is on: without a webhook, no insert evaluates them.
    static let eventTriggers = """
        CREATE TRIGGER IF NOT EXISTS message_event_accepted AFTER INSERT ON mailbox
        WHEN EXISTS (SELECT 1 FROM event_stream WHERE app_id = NEW.app_id)
        BEGIN
            INSERT INTO message_event (app_id, kind, message_id, user_id, at)
            SELECT NEW.app_id, 'accepted', NEW.message_id, NEW.user_id, m.created_at FROM message m
            WHERE m.id = NEW.message_id;
        END;
        CREATE TRIGGER IF NOT EXISTS message_event_receipt AFTER INSERT ON message_receipt
        WHEN NEW.kind IN ('synced', 'shown', 'opened') AND EXISTS (SELECT 1 FROM event_stream WHERE app_id = NEW.app_id)
        BEGIN
            INSERT INTO message_event (app_id, kind, message_id, user_id, device_id, at)
            VALUES (NEW.app_id, CASE NEW.kind WHEN 'synced' THEN 'delivered' ELSE NEW.kind END, NEW.message_id,
                    (SELECT user_id FROM device WHERE app_id = NEW.app_id AND id = NEW.device_id), NEW.device_id, NEW.at);
        END;
        CREATE TRIGGER IF NOT EXISTS message_event_read AFTER INSERT ON message_read
        WHEN EXISTS (SELECT 1 FROM event_stream WHERE app_id = NEW.app_id)
        BEGIN
            INSERT INTO message_event (app_id, kind, message_id, user_id, device_id, at)
            VALUES (NEW.app_id, 'read', NEW.message_id, NEW.user_id, NEW.device_id, NEW.read_at);
        END;
        -- A push's end (its first attempt that is not a retry): APNs' answer, and with one of
        -- Apple's dead-token reasons (docs/apns.md) the token's death too, one per message the
        -- push stood for.
        CREATE TRIGGER IF NOT EXISTS message_event_push AFTER UPDATE OF state ON push_outbox
        WHEN OLD.state = 'pending' AND NEW.state != 'pending' AND NEW.attempts > OLD.attempts
            AND EXISTS (SELECT 1 FROM event_stream WHERE app_id = NEW.app_id)
        BEGIN
            INSERT INTO message_event (app_id, kind, message_id, user_id, device_id, push_id, apns_id, status, reason, at)
            SELECT NEW.app_id, k.kind, j.value, (SELECT user_id FROM device WHERE app_id = NEW.app_id AND id = NEW.device_id),
                   NEW.device_id, NEW.id, coalesce(NEW.apns_id, NEW.id), NEW.status, NEW.apns_reason, NEW.sent_at
            FROM json_each(NEW.message_ids) j
            JOIN (SELECT 1 AS n, CASE NEW.state WHEN 'sent' THEN 'pushed' ELSE 'apns-refused' END AS kind
                  UNION ALL SELECT 2, 'token-dead'
                  WHERE NEW.state = 'failed' AND NEW.apns_reason IN ('Unregistered', 'BadDeviceToken', 'DeviceTokenNotForTopic')) k
            ORDER BY j.value, k.n;
        END;
        """

    static let dropEventTriggers = """
        DROP TRIGGER IF EXISTS message_event_accepted;
        DROP TRIGGER IF EXISTS message_event_receipt;
        DROP TRIGGER IF EXISTS message_event_read;
        DROP TRIGGER IF EXISTS message_event_push;
        """

    public func setEventLogApps(_ appIDs: Set<String>, now: Date) async throws {
        try await groupCommit.write { db in
            try db.execute(sql: appIDs.isEmpty ? Self.dropEventTriggers : Self.eventTriggers)
            let current = Set(try String.fetchAll(db, sql: "SELECT app_id FROM event_stream"))
            for appID in current.subtracting(appIDs) {
                try db.execute(sql: "DELETE FROM event_stream WHERE app_id = ?", arguments: [appID])
                try db.execute(sql: "DELETE FROM message_event WHERE app_id = ?", arguments: [appID])
                try db.execute(sql: "DELETE FROM webhook_attempt WHERE app_id = ?", arguments: [appID])
            }
            // A new log starts at the end: the events before it were never written.
            let end = try Int64.fetchOne(db, sql: "SELECT coalesce(max(seq), 0) FROM message_event") ?? 0
            for appID in appIDs.subtracting(current) {
                try db.execute(
                    sql: "INSERT INTO event_stream (app_id, cursor_seq, expired_through) VALUES (?, ?, ?)",
                    arguments: [appID, end, now.millisecondsSince1970])
            }
        }
    }

    public func events(appID: String, after position: EventPosition, limit: Int) async throws -> [MessageEvent] {
        try await writer.read { db in
            try Row.fetchAll(
                db,
                sql: """
                    SELECT seq, kind, message_id, user_id, device_id, push_id, apns_id, status, reason, at
                    FROM message_event WHERE app_id = ? AND seq > ? ORDER BY seq LIMIT ?
                    """,
                arguments: [appID, position.sequence, limit]
            ).compactMap { row in
                MessageEvent.Kind(rawValue: row[1]).map { kind in
                    MessageEvent(
                        position: EventPosition(sequence: row[0]), appID: appID, kind: kind, messageID: row[2], userID: row[3],
                        deviceID: row[4], pushID: row[5], apnsID: row[6], status: row[7], reason: row[8],
                        at: Date(millisecondsSince1970: row[9]))
                }
            }
        }
    }

    public func eventPosition(appID: String, id: Int64) async throws -> EventPosition? {
        try await writer.read { db in
            try Int64.fetchOne(db, sql: "SELECT seq FROM message_event WHERE app_id = ? AND seq = ?", arguments: [appID, id])
                .map { EventPosition(sequence: $0) }
        }
    }

    public func eventPosition(appID: String, before date: Date) async throws -> EventPosition {
        try await writer.read { db in
            let first = try Int64.fetchOne(
                db, sql: "SELECT min(seq) FROM message_event WHERE app_id = ? AND at >= ?",
                arguments: [appID, date.millisecondsSince1970])
            if let first { return EventPosition(sequence: first - 1) }
            return EventPosition(sequence: try Int64.fetchOne(
                db, sql: "SELECT coalesce(max(seq), 0) FROM message_event WHERE app_id = ?", arguments: [appID]) ?? 0)
        }
    }

    public func leaseWebhook(appID: String, node: String, until: Date, now: Date) async throws -> EventPosition? {
        try await groupCommit.write { db in
            try db.execute(
                sql: """
                    UPDATE event_stream SET leased_by = ?, lease_until = ?
                    WHERE app_id = ? AND (leased_by IS NULL OR leased_by = ? OR lease_until < ?)
                    """,
                arguments: [node, until.millisecondsSince1970, appID, node, now.millisecondsSince1970])
            guard db.changesCount == 1 else { return nil }
            return try Int64.fetchOne(db, sql: "SELECT cursor_seq FROM event_stream WHERE app_id = ?", arguments: [appID])
                .map { EventPosition(sequence: $0) }
        }
    }

    public func webhookCursor(appID: String, node: String, now: Date) async throws -> EventPosition? {
        try await writer.read { db in
            try Int64.fetchOne(
                db, sql: "SELECT cursor_seq FROM event_stream WHERE app_id = ? AND leased_by = ? AND lease_until >= ?",
                arguments: [appID, node, now.millisecondsSince1970]
            ).map { EventPosition(sequence: $0) }
        }
    }

    public func advanceWebhook(appID: String, node: String, to position: EventPosition, attempt: WebhookAttempt) async throws -> Bool {
        try await groupCommit.write { db in
            try db.execute(
                sql: "UPDATE event_stream SET cursor_seq = max(cursor_seq, ?) WHERE app_id = ? AND leased_by = ?",
                arguments: [position.sequence, appID, node])
            guard db.changesCount == 1 else { return false }
            try Self.insert(attempt, db)
            return true
        }
    }

    public func recordWebhookAttempt(_ attempt: WebhookAttempt) async throws {
        try await groupCommit.write { db in try Self.insert(attempt, db) }
    }

    public func webhookAttempts(appID: String, limit: Int) async throws -> [WebhookAttempt] {
        try await writer.read { db in
            try Row.fetchAll(
                db,
                sql: """
                    SELECT \(Self.attemptColumns) FROM webhook_attempt WHERE app_id = ? ORDER BY id DESC LIMIT ?
                    """,
                arguments: [appID, limit]
            ).map { Self.attempt($0, appID: appID) }
        }
    }

    public func rewindWebhook(appID: String, to position: EventPosition) async throws {
        try await groupCommit.write { db in
            try db.execute(
                sql: "UPDATE event_stream SET cursor_seq = min(cursor_seq, ?) WHERE app_id = ?", arguments: [position.sequence, appID])
        }
    }

    public func recordExpiredEvents(appID: String, now: Date) async throws -> Int {
        try await groupCommit.write { db in
            guard let through = try Int64.fetchOne(
                db, sql: "SELECT expired_through FROM event_stream WHERE app_id = ?", arguments: [appID])
            else { return 0 }
            let upTo = now.millisecondsSince1970
            guard upTo > through else { return 0 }
            // The devices of each recipient that have no `synced` receipt: the sync skips an
            // expired message, so none comes after this (`recordSynced`).
            try db.execute(
                sql: """
                    INSERT INTO message_event (app_id, kind, message_id, user_id, device_id, at)
                    SELECT m.app_id, 'expired', m.id, mb.user_id, d.id, m.expires_at
                    FROM message m
                    JOIN mailbox mb ON mb.message_id = m.id AND mb.app_id = m.app_id
                    JOIN device d ON d.app_id = m.app_id AND d.user_id = mb.user_id
                    WHERE m.app_id = ? AND m.expires_at > ? AND m.expires_at <= ?
                      AND NOT EXISTS (SELECT 1 FROM message_receipt r WHERE r.message_id = m.id AND r.app_id = m.app_id
                                      AND r.device_id = d.id AND r.kind = 'synced')
                    ORDER BY m.expires_at, m.id, d.id
                    """,
                arguments: [appID, through, upTo])
            let written = db.changesCount
            try db.execute(sql: "UPDATE event_stream SET expired_through = ? WHERE app_id = ?", arguments: [upTo, appID])
            return written
        }
    }

    public func trimEventLog(appID: String, backlog: Int, sentBefore: Date) async throws -> Int {
        try await groupCommit.write { db in
            guard let cursor = try Int64.fetchOne(db, sql: "SELECT cursor_seq FROM event_stream WHERE app_id = ?", arguments: [appID])
            else { return 0 }
            try db.execute(
                sql: "DELETE FROM message_event WHERE app_id = ? AND seq <= ? AND at < ?",
                arguments: [appID, cursor, sentBefore.millisecondsSince1970])
            try db.execute(
                sql: "DELETE FROM webhook_attempt WHERE app_id = ? AND at < ?", arguments: [appID, sentBefore.millisecondsSince1970])
            // The oldest waiting events beyond the backlog go unsent: the cursor moves past them.
            guard let newCursor = try Int64.fetchOne(
                db, sql: "SELECT seq FROM message_event WHERE app_id = ? AND seq > ? ORDER BY seq DESC LIMIT 1 OFFSET ?",
                arguments: [appID, cursor, backlog])
            else { return 0 }
            let dropped = try Int.fetchOne(
                db, sql: "SELECT count(*) FROM message_event WHERE app_id = ? AND seq > ? AND seq <= ?",
                arguments: [appID, cursor, newCursor]) ?? 0
            try db.execute(
                sql: "DELETE FROM message_event WHERE app_id = ? AND seq > ? AND seq <= ?", arguments: [appID, cursor, newCursor])
            try db.execute(
                sql: "UPDATE event_stream SET cursor_seq = ?, dropped = dropped + ? WHERE app_id = ?",
                arguments: [newCursor, dropped, appID])
            return dropped
        }
    }

    public func eventLogStatus(appID: String, now: Date) async throws -> EventLogStatus? {
        try await writer.read { db in
            guard let row = try Row.fetchOne(
                db, sql: "SELECT cursor_seq, dropped, leased_by, lease_until FROM event_stream WHERE app_id = ?",
                arguments: [appID])
            else { return nil }
            let cursor: Int64 = row[0]
            let waiting = try Row.fetchOne(
                db, sql: "SELECT count(*), min(at) FROM message_event WHERE app_id = ? AND seq > ?", arguments: [appID, cursor])
            let leaseUntil: Int64? = row[3]
            let last = try Row.fetchOne(
                db,
                sql: """
                    SELECT \(Self.attemptColumns) FROM webhook_attempt WHERE app_id = ? ORDER BY id DESC LIMIT 1
                    """,
                arguments: [appID]
            ).map { Self.attempt($0, appID: appID) }
            return EventLogStatus(
                appID: appID, cursor: EventPosition(sequence: cursor), behind: waiting?[0] ?? 0,
                oldestWaiting: (waiting?[1] as Int64?).map(Date.init(millisecondsSince1970:)), dropped: row[1],
                sender: leaseUntil.map { $0 >= now.millisecondsSince1970 } == true ? row[2] : nil, lastAttempt: last)
        }
    }

    private static let attemptColumns = "id, at, first_event, last_event, events, status, error, duration_ms"

    private static func attempt(_ row: Row, appID: String) -> WebhookAttempt {
        WebhookAttempt(
            id: row[0], appID: appID, at: Date(millisecondsSince1970: row[1]), firstEvent: row[2], lastEvent: row[3],
            events: row[4], status: row[5], error: row[6], duration: TimeInterval(row[7] as Int64) / 1000)
    }

    private static func insert(_ attempt: WebhookAttempt, _ db: Database) throws {
        try db.execute(
            sql: """
                INSERT INTO webhook_attempt (app_id, at, first_event, last_event, events, status, error, duration_ms)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?)
                """,
            arguments: [
                attempt.appID, attempt.at.millisecondsSince1970, attempt.firstEvent, attempt.lastEvent, attempt.events,
                attempt.status, attempt.error, Int64((attempt.duration * 1000).rounded()),
            ])
    }
}
