import BeckonProtocol
import GRDB

extension SQLiteStore {
    /// The schema, as an ordered list of migrations. A migration, once released, is never
    /// edited: changes go in a new one. Each runs in a transaction, and GRDB records what ran in
    /// `grdb_migrations`, so opening an up-to-date file runs nothing.
    ///
    /// The SQL stays close to what PostgreSQL accepts (snake_case, `ON CONFLICT`, partial
    /// indexes, integer milliseconds), so the PostgreSQL store can share the same schema.
    static let migrator: DatabaseMigrator = {
        var migrator = DatabaseMigrator()

        migrator.registerMigration("v1") { db in
            try db.execute(sql: """
                CREATE TABLE app (
                    id TEXT NOT NULL PRIMARY KEY,
                    bundle_id TEXT NOT NULL,
                    team_id TEXT NOT NULL,
                    apns_key_id TEXT,
                    apns_key_reference TEXT,
                    environments TEXT NOT NULL,          -- JSON array of "sandbox", "production"
                    delivery_defaults BLOB NOT NULL,     -- JSON object, the planner's
                    limits TEXT NOT NULL,                -- JSON AppLimits
                    created_at INTEGER NOT NULL,
                    updated_at INTEGER NOT NULL
                );

                -- Only the SHA-256 of a key is stored; the id is the key's visible, indexed part.
                CREATE TABLE api_key (
                    id TEXT NOT NULL PRIMARY KEY,
                    app_id TEXT NOT NULL REFERENCES app(id) ON DELETE CASCADE,
                    name TEXT,
                    hash BLOB NOT NULL,
                    created_at INTEGER NOT NULL,
                    revoked_at INTEGER
                );
                CREATE INDEX api_key_app ON api_key(app_id);

                CREATE TABLE device (
                    app_id TEXT NOT NULL REFERENCES app(id) ON DELETE CASCADE,
                    id TEXT NOT NULL,
                    user_id TEXT NOT NULL,
                    bundle_id TEXT NOT NULL,
                    environment TEXT NOT NULL CHECK (environment IN ('sandbox', 'production')),
                    push_token TEXT,                     -- lowercase hex
                    push_token_registered_at INTEGER,
                    voip_token TEXT,
                    voip_token_registered_at INTEGER,
                    capabilities TEXT NOT NULL,          -- JSON DeviceCapabilities
                    locale TEXT,
                    app_version TEXT,
                    credential_id TEXT,
                    credential_hash BLOB,
                    created_at INTEGER NOT NULL,
                    updated_at INTEGER NOT NULL,
                    PRIMARY KEY (app_id, id)
                );
                CREATE INDEX device_user ON device(app_id, user_id);
                -- A token belongs to one install: never push the same phone twice.
                CREATE UNIQUE INDEX device_push_token ON device(app_id, push_token) WHERE push_token IS NOT NULL;
                CREATE UNIQUE INDEX device_voip_token ON device(app_id, voip_token) WHERE voip_token IS NOT NULL;
                CREATE UNIQUE INDEX device_credential ON device(credential_id) WHERE credential_id IS NOT NULL;

                -- Content is stored once, whatever the number of recipients.
                CREATE TABLE message (
                    id TEXT NOT NULL PRIMARY KEY,
                    app_id TEXT NOT NULL REFERENCES app(id) ON DELETE CASCADE,
                    kind TEXT NOT NULL,
                    payload BLOB NOT NULL,
                    hints TEXT,                          -- JSON NotificationHints
                    urgency TEXT NOT NULL,
                    expires_at INTEGER,
                    idempotency_key TEXT,
                    fingerprint BLOB NOT NULL,           -- SHA-256 of what a retry must repeat
                    created_at INTEGER NOT NULL
                );
                -- The guarantee behind idempotency, also when several nodes race (PostgreSQL).
                CREATE UNIQUE INDEX message_idempotency ON message(app_id, idempotency_key)
                    WHERE idempotency_key IS NOT NULL;

                -- The last sequence handed out per user. A counter rather than max(sequence):
                -- once old mailbox rows are pruned, max() could go back and hand out a number a
                -- device already acknowledged. On PostgreSQL the row is also the per-user lock.
                CREATE TABLE user_sequence (
                    app_id TEXT NOT NULL REFERENCES app(id) ON DELETE CASCADE,
                    user_id TEXT NOT NULL,
                    last_sequence INTEGER NOT NULL,
                    PRIMARY KEY (app_id, user_id)
                );

                CREATE TABLE mailbox (
                    app_id TEXT NOT NULL,
                    user_id TEXT NOT NULL,
                    sequence INTEGER NOT NULL,
                    message_id TEXT NOT NULL REFERENCES message(id) ON DELETE CASCADE,
                    PRIMARY KEY (app_id, user_id, sequence)
                ) WITHOUT ROWID;
                CREATE UNIQUE INDEX mailbox_message ON mailbox(message_id, app_id, user_id);

                -- Cleared when the device's user changes: sequences are per user.
                CREATE TABLE device_cursor (
                    app_id TEXT NOT NULL,
                    device_id TEXT NOT NULL,
                    acked_sequence INTEGER NOT NULL,
                    updated_at INTEGER NOT NULL,
                    PRIMARY KEY (app_id, device_id),
                    FOREIGN KEY (app_id, device_id) REFERENCES device(app_id, id) ON DELETE CASCADE
                );

                -- Who read what, when. Not tied to the device row: a read stays a read after the
                -- device that made it is deleted.
                CREATE TABLE message_read (
                    app_id TEXT NOT NULL,
                    user_id TEXT NOT NULL,
                    message_id TEXT NOT NULL REFERENCES message(id) ON DELETE CASCADE,
                    device_id TEXT NOT NULL,
                    read_at INTEGER NOT NULL,
                    PRIMARY KEY (app_id, user_id, message_id, device_id)
                ) WITHOUT ROWID;
                CREATE INDEX message_read_message ON message_read(message_id);
                """)
        }

        migrator.registerMigration("v2-delivery") { db in
            try db.execute(sql: """
                -- The delivery planner's state per device (BeckonDelivery.DevicePlanner as JSON:
                -- the store keeps it verbatim). Saved in the same transaction as the pushes it
                -- decided, so a crash never leaves one without the other.
                CREATE TABLE delivery_state (
                    app_id TEXT NOT NULL,
                    device_id TEXT NOT NULL,
                    planner BLOB NOT NULL,
                    next_deadline INTEGER,               -- when the planner must be woken
                    unreachable INTEGER NOT NULL DEFAULT 0,
                    updated_at INTEGER NOT NULL,
                    PRIMARY KEY (app_id, device_id),
                    FOREIGN KEY (app_id, device_id) REFERENCES device(app_id, id) ON DELETE CASCADE
                );
                CREATE INDEX delivery_state_deadline ON delivery_state(next_deadline)
                    WHERE next_deadline IS NOT NULL;
                -- Every push decided, written before it is sent (design rule 9): a pending row
                -- is sent after a crash. Rows stay after sending as the record wake measurement
                -- (rule 10) and the delivery report read.
                CREATE TABLE push_outbox (
                    id TEXT NOT NULL PRIMARY KEY,        -- the apns-id, lowercase UUID
                    app_id TEXT NOT NULL,
                    device_id TEXT NOT NULL,
                    token_kind TEXT NOT NULL CHECK (token_kind IN ('remote', 'voip')),
                    reason TEXT NOT NULL,
                    strategy TEXT NOT NULL,
                    push BLOB NOT NULL,                  -- (v6: replaced by the rendered request)
                    message_count INTEGER NOT NULL,
                    state TEXT NOT NULL CHECK (state IN ('pending', 'sent', 'failed')),
                    attempts INTEGER NOT NULL DEFAULT 0,
                    next_attempt_at INTEGER NOT NULL,
                    created_at INTEGER NOT NULL,
                    sent_at INTEGER,
                    status INTEGER,                      -- APNs' HTTP status of the last attempt
                    apns_reason TEXT,
                    wake TEXT CHECK (wake IN ('observed', 'missed')),
                    wake_latency_ms INTEGER
                );
                CREATE INDEX push_outbox_pending ON push_outbox(next_attempt_at) WHERE state = 'pending';
                CREATE INDEX push_outbox_app ON push_outbox(app_id, created_at);
                -- Why APNs refuses the device's pushes for a reason the device must fix
                -- (DeviceTokenNotForTopic, TopicDisallowed); cleared when it registers again.
                ALTER TABLE device ADD COLUMN push_problem TEXT;
                """)
        }
        migrator.registerMigration("v3-content-key") { db in
            // The key content pushes are sealed with for the device's extension.
            try db.execute(sql: "ALTER TABLE device ADD COLUMN content_key BLOB")
        }
        migrator.registerMigration("v4-unread-counters") { db in
            // The badge is read for every push the planner decides: counting a user's whole
            // mailbox each time grew with the mailbox. Unread messages are counted as they come
            // and go instead: a counter for those that never expire, and a small table for those
            // that do (they stop counting at their expiry, which a counter cannot see).
            let counted = MessageKind.allCases.filter(\.countsAsUnread).map { "'\($0.rawValue)'" }.joined(separator: ", ")
            try db.execute(sql: """
                ALTER TABLE user_sequence ADD COLUMN unread INTEGER NOT NULL DEFAULT 0;
                CREATE TABLE unread_expiring (
                    app_id TEXT NOT NULL,
                    user_id TEXT NOT NULL,
                    message_id TEXT NOT NULL REFERENCES message(id) ON DELETE CASCADE,
                    expires_at INTEGER NOT NULL,
                    PRIMARY KEY (app_id, user_id, message_id)
                ) WITHOUT ROWID;
                UPDATE user_sequence SET unread = (
                    SELECT count(*) FROM mailbox mb JOIN message m ON m.id = mb.message_id
                    WHERE mb.app_id = user_sequence.app_id AND mb.user_id = user_sequence.user_id
                      AND m.kind IN (\(counted)) AND m.expires_at IS NULL
                      AND NOT EXISTS (SELECT 1 FROM message_read r WHERE r.app_id = mb.app_id
                                      AND r.user_id = mb.user_id AND r.message_id = mb.message_id));
                INSERT INTO unread_expiring (app_id, user_id, message_id, expires_at)
                    SELECT mb.app_id, mb.user_id, mb.message_id, m.expires_at
                    FROM mailbox mb JOIN message m ON m.id = mb.message_id
                    WHERE m.kind IN (\(counted)) AND m.expires_at IS NOT NULL
                      AND NOT EXISTS (SELECT 1 FROM message_read r WHERE r.app_id = mb.app_id
                                      AND r.user_id = mb.user_id AND r.message_id = mb.message_id);
                """)
        }
        migrator.registerMigration("v5-unread-expiry-index") { db in
            // Expired rows stop counting at once and are deleted in the background
            // (`pruneExpiredUnread`), which needs to find them without a scan.
            try db.execute(sql: "CREATE INDEX unread_expiring_expiry ON unread_expiring(expires_at)")
        }
        migrator.registerMigration("v6-rendered-outbox") { db in
            // The outbox holds the request as rendered when the push was decided (headers and
            // body), not the plan it was rendered from: the dispatcher sends what was decided.
            // Pending rows of the old form are given up: their plan's format is gone.
            try db.execute(sql: """
                ALTER TABLE push_outbox ADD COLUMN push_type TEXT;
                ALTER TABLE push_outbox ADD COLUMN topic TEXT;
                ALTER TABLE push_outbox ADD COLUMN priority INTEGER;
                ALTER TABLE push_outbox ADD COLUMN expiration TEXT;   -- apns-expiration; NULL: none
                ALTER TABLE push_outbox ADD COLUMN collapse_id TEXT;
                ALTER TABLE push_outbox ADD COLUMN payload BLOB;
                -- A push that rings a call: the call, and when ringing is over (rule 6).
                ALTER TABLE push_outbox ADD COLUMN ringing_call_id TEXT;
                ALTER TABLE push_outbox ADD COLUMN ringing_until INTEGER;
                UPDATE push_outbox SET state = 'failed', apns_reason = 'FormatChanged' WHERE state = 'pending';
                ALTER TABLE push_outbox DROP COLUMN push;
                """)
        }
        migrator.registerMigration("v7-call-ends") { db in
            // How each call ended, as the backend reported it (`POST /v1/calls/{id}/end`): once,
            // with one outcome; no push rings it after.
            try db.execute(sql: """
                CREATE TABLE call_end (
                    app_id TEXT NOT NULL,
                    call_id TEXT NOT NULL REFERENCES message(id) ON DELETE CASCADE,
                    outcome TEXT NOT NULL,
                    ended_at INTEGER NOT NULL,
                    PRIMARY KEY (app_id, call_id)
                ) WITHOUT ROWID;
                """)
        }
        migrator.registerMigration("v8-delivery-versions") { db in
            // Each planner save names the version it was planned from (DeliveryState.version).
            try db.execute(sql: "ALTER TABLE delivery_state ADD COLUMN version INTEGER NOT NULL DEFAULT 1")
        }
        migrator.registerMigration("v9-delivery-connected") { db in
            // DeliveryState.connected: what a restarted lone node must tell of a drop.
            try db.execute(sql: "ALTER TABLE delivery_state ADD COLUMN connected INTEGER NOT NULL DEFAULT 0")
        }
        migrator.registerMigration("v10-caller-apns-id") { db in
            // The caller's apns-id header when it is not the outbox key (OutboxPush.id); NULL: the key.
            try db.execute(sql: "ALTER TABLE push_outbox ADD COLUMN apns_id TEXT")
        }
        migrator.registerMigration("v11-message-trace") { db in
            try db.execute(sql: """
                -- The messages each push stood for, written with the push: a message's trace
                -- finds its pushes here (MessageTraceStore).
                CREATE TABLE push_message (
                    message_id TEXT NOT NULL,
                    push_id TEXT NOT NULL,
                    created_at INTEGER NOT NULL,
                    PRIMARY KEY (message_id, push_id)
                ) WITHOUT ROWID;
                CREATE INDEX push_message_created ON push_message(created_at);
                -- Every attempt at a push and APNs' answer (the outbox row keeps only the last).
                CREATE TABLE push_attempt (
                    push_id TEXT NOT NULL,
                    attempt INTEGER NOT NULL,
                    at INTEGER NOT NULL,
                    outcome TEXT NOT NULL CHECK (outcome IN ('sent', 'failed', 'retry')),
                    status INTEGER NOT NULL,
                    reason TEXT,
                    unique_id TEXT,                      -- apns-unique-id (sandbox only)
                    PRIMARY KEY (push_id, attempt)
                ) WITHOUT ROWID;
                CREATE INDEX push_attempt_at ON push_attempt(at);
                -- What happened to a message on a device, first report of each kind.
                CREATE TABLE message_receipt (
                    message_id TEXT NOT NULL,
                    app_id TEXT NOT NULL,
                    device_id TEXT NOT NULL,
                    kind TEXT NOT NULL CHECK (kind IN ('synced', 'shown', 'opened', 'removed')),
                    at INTEGER NOT NULL,
                    PRIMARY KEY (message_id, app_id, device_id, kind)
                ) WITHOUT ROWID;
                CREATE INDEX message_receipt_at ON message_receipt(at);
                -- When the wake outcome was recorded: the app's connection, or the window's end.
                ALTER TABLE push_outbox ADD COLUMN wake_at INTEGER;
                -- An app's messages of a window (ShownShare), without reading every message.
                CREATE INDEX message_app_created ON message(app_id, created_at);
                """)
        }
        migrator.registerMigration("v12-event-log") { db in
            try db.execute(sql: """
                -- The apps whose event log is on (EventLog), with their webhook's cursor and lease.
                CREATE TABLE event_stream (
                    app_id TEXT NOT NULL PRIMARY KEY,
                    cursor_seq INTEGER NOT NULL,
                    leased_by TEXT,
                    lease_until INTEGER,
                    expired_through INTEGER NOT NULL,    -- expiries up to here are logged
                    dropped INTEGER NOT NULL DEFAULT 0
                );
                CREATE TABLE message_event (
                    seq INTEGER PRIMARY KEY AUTOINCREMENT,
                    app_id TEXT NOT NULL,
                    kind TEXT NOT NULL,
                    message_id TEXT,
                    user_id TEXT,
                    device_id TEXT,
                    push_id TEXT,
                    apns_id TEXT,
                    status INTEGER,
                    reason TEXT,
                    at INTEGER NOT NULL
                );
                CREATE INDEX message_event_app ON message_event(app_id, seq);
                CREATE TABLE webhook_attempt (
                    id INTEGER PRIMARY KEY AUTOINCREMENT,
                    app_id TEXT NOT NULL,
                    at INTEGER NOT NULL,
                    first_event INTEGER NOT NULL,
                    last_event INTEGER NOT NULL,
                    events INTEGER NOT NULL,
                    status INTEGER NOT NULL,
                    error TEXT,
                    duration_ms INTEGER NOT NULL
                );
                CREATE INDEX webhook_attempt_app ON webhook_attempt(app_id, id);
                -- The expiry sweep reads an app's messages by expiry; a push attempt's event finds
                -- the push's messages.
                CREATE INDEX message_app_expiry ON message(app_id, expires_at) WHERE expires_at IS NOT NULL;
                CREATE INDEX push_message_push ON push_message(push_id);
                """)
            // The triggers that write the events are created with the first app whose log is on
            // (SQLiteStore+EventLog): without a webhook, no write pays for them.
        }
        migrator.registerMigration("v13-outbox-trace") { db in
            // A push's messages and attempts move onto its outbox row, written anyway: the two
            // tables of v11 cost a burst five B-tree inserts a push (docs/trace.md, "Where it
            // comes from"). A message's pushes are found by its devices instead
            // (push_outbox_device), a window's messages by their time-ordered ids
            // (ShownShare+Query), not by message_app_created.
            try db.execute(sql: """
                DROP TRIGGER IF EXISTS message_event_push;
                -- A JSON array of the message ids the push stands for; NULL: none.
                ALTER TABLE push_outbox ADD COLUMN message_ids TEXT;
                -- A JSON array of its attempts, each [number, at, outcome, status, reason, unique id].
                ALTER TABLE push_outbox ADD COLUMN attempt_log TEXT;
                UPDATE push_outbox SET message_ids = (
                    SELECT json_group_array(message_id) FROM (
                        SELECT message_id FROM push_message WHERE push_id = push_outbox.id ORDER BY message_id))
                WHERE id IN (SELECT push_id FROM push_message);
                UPDATE push_outbox SET attempt_log = (
                    SELECT json_group_array(json_array(attempt, at, outcome, status, reason, unique_id)) FROM (
                        SELECT * FROM push_attempt WHERE push_id = push_outbox.id ORDER BY attempt))
                WHERE id IN (SELECT push_id FROM push_attempt);
                DROP TABLE push_message;
                DROP TABLE push_attempt;
                CREATE INDEX push_outbox_device ON push_outbox(app_id, device_id, created_at);
                DROP INDEX message_app_created;
                """)
            // The event log's push trigger, now on the outbox row, comes back at once for a log
            // that is on: no push completes unlogged before the event service starts.
            if try Bool.fetchOne(db, sql: "SELECT EXISTS (SELECT 1 FROM event_stream)") == true {
                try db.execute(sql: SQLiteStore.eventTriggers)
            }
        }
        return migrator
    }()
}
