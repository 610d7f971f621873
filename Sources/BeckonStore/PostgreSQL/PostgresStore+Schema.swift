import PostgresNIO

extension PostgresStore {
    /// The schema, as ordered migrations: the SQLite store's final schema (SQLiteStore+Schema)
    /// in PostgreSQL's types — `bigint` milliseconds and sequences, `bytea` for blobs. A
    /// migration, once released, is never edited.
    static let migrations: [(version: Int, sql: [String])] = [
        (1, [
            """
            CREATE TABLE app (
                id text PRIMARY KEY,
                bundle_id text NOT NULL,
                team_id text NOT NULL,
                apns_key_id text,
                apns_key_reference text,
                environments text NOT NULL,
                delivery_defaults bytea NOT NULL,
                limits text NOT NULL,
                created_at bigint NOT NULL,
                updated_at bigint NOT NULL
            )
            """,
            """
            CREATE TABLE api_key (
                id text PRIMARY KEY,
                app_id text NOT NULL REFERENCES app(id) ON DELETE CASCADE,
                name text,
                hash bytea NOT NULL,
                created_at bigint NOT NULL,
                revoked_at bigint
            )
            """,
            "CREATE INDEX api_key_app ON api_key(app_id)",
            """
            CREATE TABLE device (
                app_id text NOT NULL REFERENCES app(id) ON DELETE CASCADE,
                id text NOT NULL,
                user_id text NOT NULL,
                bundle_id text NOT NULL,
                environment text NOT NULL CHECK (environment IN ('sandbox', 'production')),
                push_token text,
                push_token_registered_at bigint,
                voip_token text,
                voip_token_registered_at bigint,
                capabilities text NOT NULL,
                locale text,
                app_version text,
                credential_id text,
                credential_hash bytea,
                content_key bytea,
                push_problem text,
                created_at bigint NOT NULL,
                updated_at bigint NOT NULL,
                PRIMARY KEY (app_id, id)
            )
            """,
            "CREATE INDEX device_user ON device(app_id, user_id)",
            "CREATE UNIQUE INDEX device_push_token ON device(app_id, push_token) WHERE push_token IS NOT NULL",
            "CREATE UNIQUE INDEX device_voip_token ON device(app_id, voip_token) WHERE voip_token IS NOT NULL",
            "CREATE UNIQUE INDEX device_credential ON device(credential_id) WHERE credential_id IS NOT NULL",
            """
            CREATE TABLE message (
                id text PRIMARY KEY,
                app_id text NOT NULL REFERENCES app(id) ON DELETE CASCADE,
                kind text NOT NULL,
                payload bytea NOT NULL,
                hints text,
                urgency text NOT NULL,
                expires_at bigint,
                idempotency_key text,
                fingerprint bytea NOT NULL,
                created_at bigint NOT NULL
            )
            """,
            """
            CREATE UNIQUE INDEX message_idempotency ON message(app_id, idempotency_key)
                WHERE idempotency_key IS NOT NULL
            """,
            // The row is also the per-user lock: appends for one user take it in turn.
            """
            CREATE TABLE user_sequence (
                app_id text NOT NULL REFERENCES app(id) ON DELETE CASCADE,
                user_id text NOT NULL,
                last_sequence bigint NOT NULL,
                unread integer NOT NULL DEFAULT 0,
                PRIMARY KEY (app_id, user_id)
            )
            """,
            """
            CREATE TABLE mailbox (
                app_id text NOT NULL,
                user_id text NOT NULL,
                sequence bigint NOT NULL,
                message_id text NOT NULL REFERENCES message(id) ON DELETE CASCADE,
                PRIMARY KEY (app_id, user_id, sequence)
            )
            """,
            "CREATE UNIQUE INDEX mailbox_message ON mailbox(message_id, app_id, user_id)",
            """
            CREATE TABLE device_cursor (
                app_id text NOT NULL,
                device_id text NOT NULL,
                acked_sequence bigint NOT NULL,
                updated_at bigint NOT NULL,
                PRIMARY KEY (app_id, device_id),
                FOREIGN KEY (app_id, device_id) REFERENCES device(app_id, id) ON DELETE CASCADE
            )
            """,
            """
            CREATE TABLE message_read (
                app_id text NOT NULL,
                user_id text NOT NULL,
                message_id text NOT NULL REFERENCES message(id) ON DELETE CASCADE,
                device_id text NOT NULL,
                read_at bigint NOT NULL,
                PRIMARY KEY (app_id, user_id, message_id, device_id)
            )
            """,
            "CREATE INDEX message_read_message ON message_read(message_id)",
            """
            CREATE TABLE unread_expiring (
                app_id text NOT NULL,
                user_id text NOT NULL,
                message_id text NOT NULL REFERENCES message(id) ON DELETE CASCADE,
                expires_at bigint NOT NULL,
                PRIMARY KEY (app_id, user_id, message_id)
            )
            """,
            "CREATE INDEX unread_expiring_expiry ON unread_expiring(expires_at)",
            """
            CREATE TABLE delivery_state (
                app_id text NOT NULL,
                device_id text NOT NULL,
                planner bytea NOT NULL,
                next_deadline bigint,
                unreachable boolean NOT NULL DEFAULT false,
                updated_at bigint NOT NULL,
                PRIMARY KEY (app_id, device_id),
                FOREIGN KEY (app_id, device_id) REFERENCES device(app_id, id) ON DELETE CASCADE
            )
            """,
            "CREATE INDEX delivery_state_deadline ON delivery_state(next_deadline) WHERE next_deadline IS NOT NULL",
            // Claimed with FOR UPDATE SKIP LOCKED; `next_attempt_at` doubles as the claim's lease,
            // so a dead node's claims come due again when it runs out (docs/cluster.md, "Deadlines and the outbox").
            """
            CREATE TABLE push_outbox (
                id text PRIMARY KEY,
                app_id text NOT NULL,
                device_id text NOT NULL,
                token_kind text NOT NULL CHECK (token_kind IN ('remote', 'voip')),
                reason text NOT NULL,
                strategy text NOT NULL,
                message_count integer NOT NULL,
                state text NOT NULL CHECK (state IN ('pending', 'sent', 'failed')),
                attempts integer NOT NULL DEFAULT 0,
                next_attempt_at bigint NOT NULL,
                created_at bigint NOT NULL,
                sent_at bigint,
                status integer,
                apns_reason text,
                wake text CHECK (wake IN ('observed', 'missed')),
                wake_latency_ms bigint,
                push_type text,
                topic text,
                priority integer,
                expiration text,
                collapse_id text,
                payload bytea,
                ringing_call_id text,
                ringing_until bigint
            )
            """,
            "CREATE INDEX push_outbox_pending ON push_outbox(app_id, next_attempt_at) WHERE state = 'pending'",
            "CREATE INDEX push_outbox_app ON push_outbox(app_id, created_at)",
            """
            CREATE TABLE call_end (
                app_id text NOT NULL,
                call_id text NOT NULL REFERENCES message(id) ON DELETE CASCADE,
                outcome text NOT NULL,
                ended_at bigint NOT NULL,
                PRIMARY KEY (app_id, call_id)
            )
            """,
        ]),
        // Several nodes: planner versions, the mailbox's change time (the polling
        // fallback when a wake-up hint is lost), live nodes and where each sync session is.
        (2, [
            "ALTER TABLE delivery_state ADD COLUMN version bigint NOT NULL DEFAULT 1",
            "ALTER TABLE user_sequence ADD COLUMN changed_at bigint NOT NULL DEFAULT 0",
            "CREATE INDEX user_sequence_changed ON user_sequence(changed_at)",
            """
            CREATE TABLE beckon_node (
                id text PRIMARY KEY,
                started_at bigint NOT NULL,
                heartbeat_at bigint NOT NULL
            )
            """,
            """
            CREATE TABLE sync_session (
                app_id text NOT NULL,
                device_id text NOT NULL,
                role text NOT NULL CHECK (role IN ('app', 'extension')),
                user_id text NOT NULL,
                node_id text NOT NULL,
                session_id text NOT NULL,
                connected_at bigint NOT NULL,
                PRIMARY KEY (app_id, device_id, role)
            )
            """,
            "CREATE INDEX sync_session_node ON sync_session(node_id)",
            "CREATE INDEX sync_session_user ON sync_session(app_id, user_id)",
        ]),
        // DeliveryState.connected (rule 5 after a crash).
        (3, ["ALTER TABLE delivery_state ADD COLUMN connected boolean NOT NULL DEFAULT false"]),
        // The caller's apns-id header when it is not the outbox key (OutboxPush.id); NULL: the key.
        (4, ["ALTER TABLE push_outbox ADD COLUMN apns_id text"]),
        // A message's trace (MessageTraceStore): the SQLite store's v11, the same tables.
        (5, [
            """
            CREATE TABLE push_message (
                message_id text NOT NULL,
                push_id text NOT NULL,
                created_at bigint NOT NULL,
                PRIMARY KEY (message_id, push_id)
            )
            """,
            "CREATE INDEX push_message_created ON push_message(created_at)",
            """
            CREATE TABLE push_attempt (
                push_id text NOT NULL,
                attempt integer NOT NULL,
                at bigint NOT NULL,
                outcome text NOT NULL CHECK (outcome IN ('sent', 'failed', 'retry')),
                status integer NOT NULL,
                reason text,
                unique_id text,
                PRIMARY KEY (push_id, attempt)
            )
            """,
            "CREATE INDEX push_attempt_at ON push_attempt(at)",
            """
            CREATE TABLE message_receipt (
                message_id text NOT NULL,
                app_id text NOT NULL,
                device_id text NOT NULL,
                kind text NOT NULL CHECK (kind IN ('synced', 'shown', 'opened', 'removed')),
                at bigint NOT NULL,
                PRIMARY KEY (message_id, app_id, device_id, kind)
            )
            """,
            "CREATE INDEX message_receipt_at ON message_receipt(at)",
            "ALTER TABLE push_outbox ADD COLUMN wake_at bigint",
            "CREATE INDEX message_app_created ON message(app_id, created_at)",
        ]),
        // Each app's event log (EventLog): the SQLite store's v12. Read by (tx, seq) below the
        // oldest running transaction (EventPosition); the events are written by triggers.
        (6, [
            """
            CREATE TABLE event_stream (
                app_id text PRIMARY KEY,
                cursor_tx xid8 NOT NULL,
                cursor_seq bigint NOT NULL,
                leased_by text,
                lease_until bigint,
                expired_through bigint NOT NULL,
                dropped bigint NOT NULL DEFAULT 0
            )
            """,
            """
            CREATE TABLE message_event (
                seq bigserial PRIMARY KEY,
                tx xid8 NOT NULL DEFAULT pg_current_xact_id(),
                app_id text NOT NULL,
                kind text NOT NULL,
                message_id text,
                user_id text,
                device_id text,
                push_id text,
                apns_id text,
                status integer,
                reason text,
                at bigint NOT NULL
            )
            """,
            "CREATE INDEX message_event_app ON message_event(app_id, tx, seq)",
            """
            CREATE TABLE webhook_attempt (
                id bigserial PRIMARY KEY,
                app_id text NOT NULL,
                at bigint NOT NULL,
                first_event bigint NOT NULL,
                last_event bigint NOT NULL,
                events integer NOT NULL,
                status integer NOT NULL,
                error text,
                duration_ms bigint NOT NULL
            )
            """,
            "CREATE INDEX webhook_attempt_app ON webhook_attempt(app_id, id)",
            "CREATE INDEX message_app_expiry ON message(app_id, expires_at) WHERE expires_at IS NOT NULL",
            "CREATE INDEX push_message_push ON push_message(push_id)",
            """
            CREATE FUNCTION message_event_accepted() RETURNS trigger LANGUAGE plpgsql AS $$
            BEGIN
                IF EXISTS (SELECT 1 FROM event_stream WHERE app_id = NEW.app_id) THEN
                    INSERT INTO message_event (app_id, kind, message_id, user_id, at)
                    SELECT NEW.app_id, 'accepted', NEW.message_id, NEW.user_id, m.created_at FROM message m
                    WHERE m.id = NEW.message_id;
                END IF;
                RETURN NULL;
            END $$
            """,
            "CREATE TRIGGER message_event_accepted AFTER INSERT ON mailbox FOR EACH ROW EXECUTE FUNCTION message_event_accepted()",
            """
            CREATE FUNCTION message_event_receipt() RETURNS trigger LANGUAGE plpgsql AS $$
            BEGIN
                IF NEW.kind IN ('synced', 'shown', 'opened') AND EXISTS (SELECT 1 FROM event_stream WHERE app_id = NEW.app_id) THEN
                    INSERT INTO message_event (app_id, kind, message_id, user_id, device_id, at)
                    VALUES (NEW.app_id, CASE NEW.kind WHEN 'synced' THEN 'delivered' ELSE NEW.kind END, NEW.message_id,
                            (SELECT user_id FROM device WHERE app_id = NEW.app_id AND id = NEW.device_id), NEW.device_id, NEW.at);
                END IF;
                RETURN NULL;
            END $$
            """,
            "CREATE TRIGGER message_event_receipt AFTER INSERT ON message_receipt FOR EACH ROW EXECUTE FUNCTION message_event_receipt()",
            """
            CREATE FUNCTION message_event_read() RETURNS trigger LANGUAGE plpgsql AS $$
            BEGIN
                IF EXISTS (SELECT 1 FROM event_stream WHERE app_id = NEW.app_id) THEN
                    INSERT INTO message_event (app_id, kind, message_id, user_id, device_id, at)
                    VALUES (NEW.app_id, 'read', NEW.message_id, NEW.user_id, NEW.device_id, NEW.read_at);
                END IF;
                RETURN NULL;
            END $$
            """,
            "CREATE TRIGGER message_event_read AFTER INSERT ON message_read FOR EACH ROW EXECUTE FUNCTION message_event_read()",
            """
            CREATE FUNCTION message_event_push() RETURNS trigger LANGUAGE plpgsql AS $$
            BEGIN
                IF NEW.outcome <> 'retry' THEN
                    INSERT INTO message_event (app_id, kind, message_id, user_id, device_id, push_id, apns_id, status, reason, at)
                    SELECT o.app_id, k.kind, pm.message_id,
                           (SELECT user_id FROM device WHERE app_id = o.app_id AND id = o.device_id),
                           o.device_id, o.id, coalesce(o.apns_id, o.id), NEW.status, NEW.reason, NEW.at
                    FROM push_outbox o
                    JOIN event_stream s ON s.app_id = o.app_id
                    JOIN push_message pm ON pm.push_id = o.id
                    JOIN (SELECT 1 AS n, CASE NEW.outcome WHEN 'sent' THEN 'pushed' ELSE 'apns-refused' END AS kind
                          UNION ALL SELECT 2, 'token-dead'
                          WHERE NEW.outcome = 'failed' AND NEW.reason IN ('Unregistered', 'BadDeviceToken', 'DeviceTokenNotForTopic')) k
                      ON true
                    WHERE o.id = NEW.push_id
                    ORDER BY pm.message_id, k.n;
                END IF;
                RETURN NULL;
            END $$
            """,
            "CREATE TRIGGER message_event_push AFTER INSERT ON push_attempt FOR EACH ROW EXECUTE FUNCTION message_event_push()",
        ]),
        // A push's messages and attempts on its outbox row: the SQLite store's v13 (a message's
        // pushes are found by its devices, push_outbox_device; a window's messages by their ids). The push event's trigger moves
        // with them, to the row's end (its first attempt that is not a retry).
        (7, [
            "ALTER TABLE push_outbox ADD COLUMN message_ids jsonb, ADD COLUMN attempt_log jsonb",
            """
            UPDATE push_outbox o SET message_ids = l.ids
            FROM (SELECT push_id, jsonb_agg(message_id ORDER BY message_id) AS ids FROM push_message GROUP BY push_id) l
            WHERE o.id = l.push_id
            """,
            """
            UPDATE push_outbox o SET attempt_log = l.log
            FROM (SELECT push_id, jsonb_agg(jsonb_build_array(attempt, at, outcome, status, reason, unique_id) ORDER BY attempt) AS log
                  FROM push_attempt GROUP BY push_id) l
            WHERE o.id = l.push_id
            """,
            "DROP TABLE push_message",
            "DROP TABLE push_attempt",
            "CREATE INDEX push_outbox_device ON push_outbox(app_id, device_id, created_at)",
            "DROP INDEX message_app_created",
            """
            CREATE OR REPLACE FUNCTION message_event_push() RETURNS trigger LANGUAGE plpgsql AS $$
            BEGIN
                IF EXISTS (SELECT 1 FROM event_stream WHERE app_id = NEW.app_id) THEN
                    INSERT INTO message_event (app_id, kind, message_id, user_id, device_id, push_id, apns_id, status, reason, at)
                    SELECT NEW.app_id, k.kind, m.id, (SELECT user_id FROM device WHERE app_id = NEW.app_id AND id = NEW.device_id),
                           NEW.device_id, NEW.id, coalesce(NEW.apns_id, NEW.id), NEW.status, NEW.apns_reason, NEW.sent_at
                    FROM jsonb_array_elements_text(NEW.message_ids) AS m(id)
                    JOIN (SELECT 1 AS n, CASE NEW.state WHEN 'sent' THEN 'pushed' ELSE 'apns-refused' END AS kind
                          UNION ALL SELECT 2, 'token-dead'
                          WHERE NEW.state = 'failed' AND NEW.apns_reason IN ('Unregistered', 'BadDeviceToken', 'DeviceTokenNotForTopic')) k
                      ON true
                    ORDER BY m.id, k.n;
                END IF;
                RETURN NULL;
            END $$
            """,
            """
            CREATE TRIGGER message_event_push AFTER UPDATE OF state ON push_outbox FOR EACH ROW
            WHEN (OLD.state = 'pending' AND NEW.state <> 'pending' AND NEW.attempts > OLD.attempts)
            EXECUTE FUNCTION message_event_push()
            """,
        ]),
    ]

    /// Brings the schema up to date. Several nodes may start at once: the first takes an
    /// advisory lock for the transaction, the others wait and then find nothing to do.
    public func migrate() async throws {
        try await transaction { connection in
            try await connection.query("SELECT pg_advisory_xact_lock(\(Self.migrationLock))", logger: logger)
            try await connection.query(
                "CREATE TABLE IF NOT EXISTS beckon_migration (version integer PRIMARY KEY, applied_at bigint NOT NULL)",
                logger: logger)
            var applied = Set<Int>()
            for try await version in try await connection.query("SELECT version FROM beckon_migration", logger: logger)
                .decode(Int.self)
            {
                applied.insert(version)
            }
            // A database a newer Beckon migrated: this one would misread it.
            if let newest = applied.max(), newest > Self.migrations.map(\.version).max() ?? 0 {
                throw BeckonStoreError.schemaTooNew
            }
            for migration in Self.migrations where !applied.contains(migration.version) {
                for statement in migration.sql {
                    try await connection.query(PostgresQuery(unsafeSQL: statement), logger: logger)
                }
                try await connection.query(
                    "INSERT INTO beckon_migration (version, applied_at) VALUES (\(migration.version), \(timestamp))",
                    logger: logger)
            }
        }
    }

    /// The advisory lock that orders migrations across nodes ("BECKON" in ASCII).
    static let migrationLock: Int64 = 0x4245_434B_4F4E
}
