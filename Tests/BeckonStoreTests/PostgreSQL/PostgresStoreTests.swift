import APNSCore
import Foundation
import Logging
import Testing

@testable import BeckonStore

/// The PostgreSQL store against a real server: `BECKON_TEST_POSTGRES_URL` (CI sets it with
/// `scripts/postgres.sh start`). The other suites run the store's behaviour on both stores
/// (`withEachStore`); these add what only PostgreSQL has: several nodes on one database, its
/// migrations, and apps kept apart in one shared database.
@Suite(.enabled(if: postgresTestURL != nil, "set BECKON_TEST_POSTGRES_URL (scripts/postgres.sh start)"))
struct PostgresStoreTests {
    static var url: String? { postgresTestURL }

    func withStore(_ body: (PostgresStore) async throws -> Void) async throws {
        let store = try PostgresStore(url: Self.url!, logger: Logger(label: "beckon.store.test"))
        try await withThrowingTaskGroup(of: Void.self) { tasks in
            tasks.addTask { await store.run() }
            do {
                try await store.migrate()
                try await body(store)
            } catch {
                tasks.cancelAll()
                throw error
            }
            tasks.cancelAll()
        }
    }

    /// Ids no other run uses: the database outlives a test run.
    static func unique(_ name: String) -> String { "\(name)-\(UUID().uuidString.prefix(8).lowercased())" }

    @Test func migratingTwiceAndFromTwoNodesAtOnceIsHarmless() async throws {
        try await withStore { store in
            let other = try PostgresStore(url: Self.url!, logger: Logger(label: "beckon.store.test"))
            try await withThrowingTaskGroup(of: Void.self) { tasks in
                tasks.addTask { await other.run() }
                async let first: Void = store.migrate()
                async let second: Void = other.migrate()
                _ = try await (first, second)
                tasks.cancelAll()
            }
        }
    }

    /// SQLiteStoreTests' migration test here: a fresh database gets every migration and the
    /// SQLite store's tables, and migrating it again (a node restarting) changes nothing.
    @Test func migrationsRunOnAnEmptyDatabaseAndNotAgain() async throws {
        try await withFreshPostgresStore(url: Self.url!) { store in
            func versions() async throws -> [Int] {
                var versions: [Int] = []
                for try await version in try await store.client.query(
                    "SELECT version FROM beckon_migration ORDER BY version", logger: store.logger
                ).decode(Int.self) {
                    versions.append(version)
                }
                return versions
            }
            #expect(try await versions() == PostgresStore.migrations.map(\.version))
            var tables = Set<String>()
            for try await table in try await store.client.query(
                "SELECT tablename::text FROM pg_tables WHERE schemaname = current_schema()", logger: store.logger
            ).decode(String.self) {
                tables.insert(table)
            }
            #expect(tables.isSuperset(of: SQLiteStoreTests.tables))
            try await store.createApp(.fixture())
            try await store.migrate()
            #expect(try await versions() == PostgresStore.migrations.map(\.version))
            #expect(try await store.apps().map(\.id) == ["chat"])
        }
    }

    /// Migration 7 moved a push's messages and attempts from their tables (5) onto its outbox
    /// row: a database written before keeps its traces (SQLiteStoreTests has the SQLite twin).
    @Test func aPushsMessagesAndAttemptsMoveOntoItsOutboxRow() async throws {
        try await withFreshPostgresDatabaseURL(url: Self.url!) { database in
            let store = try PostgresStore(url: database, logger: Logger(label: "beckon.store.test"))
            try await withThrowingTaskGroup(of: Void.self) { tasks in
                tasks.addTask { await store.run() }
                defer { tasks.cancelAll() }
                // The schema as migration 6 left it, as a node of that version wrote it.
                try await store.execute(
                    unsafeSQL: "CREATE TABLE beckon_migration (version integer PRIMARY KEY, applied_at bigint NOT NULL)")
                for migration in PostgresStore.migrations where migration.version <= 6 {
                    for statement in migration.sql { try await store.execute(unsafeSQL: statement) }
                    try await store.execute(unsafeSQL: "INSERT INTO beckon_migration VALUES (\(migration.version), 0)")
                }
                for statement in [
                    """
                    INSERT INTO push_outbox (id, app_id, device_id, token_kind, reason, strategy, message_count, state,
                                             attempts, next_attempt_at, created_at, sent_at, status)
                    VALUES ('p1', 'chat', 'phone', 'remote', 'alert', 'content', 2, 'sent', 2, 0, 1000, 1011, 200),
                           ('p2', 'chat', 'phone', 'remote', 'alert', 'content', 1, 'pending', 0, 0, 1100, NULL, NULL)
                    """,
                    "INSERT INTO push_message (message_id, push_id, created_at) VALUES ('m2', 'p1', 1000), ('m1', 'p1', 1000)",
                    """
                    INSERT INTO push_attempt (push_id, attempt, at, outcome, status, reason, unique_id)
                    VALUES ('p1', 2, 1011, 'sent', 200, NULL, 'u-1'), ('p1', 1, 1001, 'retry', 503, 'ServiceUnavailable', NULL)
                    """,
                ] {
                    try await store.execute(unsafeSQL: statement)
                }
                try await store.migrate()
                var rows: [(String, String?, String?)] = []
                for try await row in try await store.client.query(
                    "SELECT id, message_ids::text, attempt_log::text FROM push_outbox ORDER BY id", logger: store.logger
                ).decode((String, String?, String?).self) {
                    rows.append(row)
                }
                #expect(rows.map(\.1) == [#"["m1", "m2"]"#, nil])
                #expect(try PushAttempt.log(rows[0].2) == [
                    PushAttempt(number: 1, at: Date(millisecondsSince1970: 1001), outcome: .retry, status: 503, reason: "ServiceUnavailable"),
                    PushAttempt(number: 2, at: Date(millisecondsSince1970: 1011), outcome: .sent, status: 200, uniqueID: "u-1"),
                ])
                #expect(try PushAttempt.log(rows[1].2).isEmpty)
            }
        }
    }

    @Test func appsAreCreatedOnceAndSaved() async throws {
        try await withStore { store in
            let id = Self.unique("chat")
            let created = try await store.createApp(.fixture(id))
            #expect(created.bundleID == "com.example.\(id)")
            await #expect(throws: BeckonStoreError.alreadyExists(id)) { try await store.createApp(.fixture(id)) }
            var changed = App.fixture(id, environments: [.sandbox])
            changed.teamID = "TEAM999999"
            let saved = try await store.saveApp(changed)
            #expect(saved.teamID == "TEAM999999" && saved.environments == [.sandbox])
            #expect(try await store.app(id: id) == saved)
            #expect(try await store.apps().contains(saved))
            #expect(try await store.app(id: Self.unique("none")) == nil)
        }
    }

    @Test func apiKeysAuthenticateUntilRevoked() async throws {
        try await withStore { store in
            let chat = Self.unique("chat")
            let mail = Self.unique("mail")
            try await store.createApp(.fixture(chat))
            try await store.createApp(.fixture(mail))
            let key = try await store.createAPIKey(appID: chat, name: "backend")
            #expect(try await store.authenticateAPIKey(key.secret) == key.key)
            #expect(try await store.authenticateAPIKey(String(key.secret.dropLast())) == nil)
            #expect(try await store.apiKeys(appID: chat).map(\.id) == [key.key.id])
            #expect(try await !store.revokeAPIKey(appID: mail, keyID: key.key.id))
            #expect(try await store.revokeAPIKey(appID: chat, keyID: key.key.id))
            #expect(try await store.authenticateAPIKey(key.secret) == nil)
            await #expect(throws: BeckonStoreError.appNotFound("nope")) { try await store.createAPIKey(appID: "nope", name: nil) }
        }
    }

    @Test func devicesRegisterTokensMoveAndCredentialsAuthenticate() async throws {
        try await withStore { store in
            let app = Self.unique("chat")
            try await store.createApp(.fixture(app))
            let token = String(repeating: "ab", count: 32)
            let phone = try await store.registerDevice(.fixture(app: app, device: "phone", user: "ann", pushToken: token.uppercased()))
            #expect(phone.pushToken == token)
            let credential = try await store.issueDeviceCredential(phone.ref)
            #expect(try await store.authenticateDevice(credential: credential)?.id == "phone")
            // The same token registered by another install moves there.
            _ = try await store.registerDevice(.fixture(app: app, device: "tablet", user: "ann", pushToken: token))
            #expect(try await store.device(phone.ref)?.pushToken == nil)
            #expect(try await store.device(appID: app, token: token, kind: .remote)?.id == "tablet")
            #expect(try await store.devices(of: UserRef(appID: app, userID: "ann")).map(\.id) == ["phone", "tablet"])
            let batch = try await store.devices(of: [UserRef(appID: app, userID: "ann"), UserRef(appID: app, userID: "zed")])
            #expect(batch[UserRef(appID: app, userID: "ann")]?.count == 2 && batch[UserRef(appID: app, userID: "zed")] == [])
            #expect(try await store.devices([phone.ref]).keys.map(\.deviceID) == ["phone"])
            // APNs says the token died before it was registered again: it stays.
            #expect(try await !store.removeToken(
                DeviceRef(appID: app, deviceID: "tablet"), kind: .remote, token: token, invalidSince: Date(timeIntervalSince1970: 0)))
            #expect(try await store.removeToken(
                DeviceRef(appID: app, deviceID: "tablet"), kind: .remote, token: token, invalidSince: Date().addingTimeInterval(60)))
            // Another user on the same install: the old credential no longer opens it.
            _ = try await store.registerDevice(.fixture(app: app, device: "phone", user: "bob"))
            #expect(try await store.authenticateDevice(credential: credential) == nil)
            #expect(try await store.deleteDevice(phone.ref))
            #expect(try await store.device(phone.ref) == nil)
            await #expect(throws: BeckonStoreError.appNotFound("nope")) {
                try await store.registerDevice(.fixture(app: "nope", device: "x", user: "y"))
            }
        }
    }

    @Test func appendsNumberEachUsersMailboxAndRetriesAnswerTheFirstAttempt() async throws {
        try await withStore { store in
            let app = Self.unique("chat")
            try await store.createApp(.fixture(app))
            let payload = Data(#"{"text":"hi"}"#.utf8)
            let first = try await store.appendMessages(appID: app, [
                NewMessage(recipients: ["ann", "bob"], payload: payload, idempotencyKey: "k1"),
                NewMessage(recipients: ["bob"], payload: payload),
            ])
            #expect(first[0].positions.map(\.sequence) == [1, 1])
            #expect(first[1].positions == [MailboxPosition(userID: "bob", sequence: 2)])
            let retry = try await store.appendMessages(appID: app, [NewMessage(recipients: ["ann", "bob"], payload: payload, idempotencyKey: "k1")])
            #expect(retry[0].isDuplicate && retry[0].message.id == first[0].message.id)
            await #expect(throws: BeckonStoreError.idempotencyConflict(key: "k1")) {
                try await store.appendMessages(appID: app, [NewMessage(recipients: ["ann"], payload: payload, idempotencyKey: "k1")])
            }
            let bob = UserRef(appID: app, userID: "bob")
            #expect(try await store.lastSequence(of: bob) == 2)
            #expect(try await store.messages(for: bob, after: 0, limit: 10).map(\.message.id) == first.map(\.message.id))
            #expect(try await store.messages(for: bob, after: 1, limit: 10).map(\.sequence) == [2])
            #expect(try await store.mailboxEntry(for: bob, messageID: first[1].message.id)?.sequence == 2)
            #expect(try await store.message(appID: app, id: first[0].message.id)?.payload == payload)
        }
    }

    @Test func twoNodesAppendingToOneUserAtOnceGetDistinctSequences() async throws {
        try await withStore { store in
            let app = Self.unique("chat")
            try await store.createApp(.fixture(app))
            let other = try PostgresStore(url: Self.url!, logger: Logger(label: "beckon.store.test"))
            try await withThrowingTaskGroup(of: Void.self) { tasks in
                tasks.addTask { await other.run() }
                let payload = Data("{}".utf8)
                let sequences = try await withThrowingTaskGroup(of: [Int64].self) { posts in
                    for index in 0..<40 {
                        let node = index % 2 == 0 ? store : other
                        posts.addTask {
                            try await node.appendMessages(appID: app, [NewMessage(recipients: ["ann", "bob"], payload: payload)])
                                .flatMap { $0.positions.map(\.sequence) }
                        }
                    }
                    return try await posts.reduce(into: []) { $0 += $1 }
                }
                #expect(sequences.count == 80)
                #expect(Set(sequences) == Set(1...40), "each user numbered 1…40 once")
                tasks.cancelAll()
            }
        }
    }

    @Test func cursorsMoveForwardReadsCountOnceAndWelcomeSaysWhatWasRead() async throws {
        try await withStore { store in
            let app = Self.unique("chat")
            try await store.createApp(.fixture(app))
            let phone = try await store.registerDevice(.fixture(app: app, device: "phone", user: "ann"))
            let tablet = try await store.registerDevice(.fixture(app: app, device: "tablet", user: "ann"))
            let payload = Data(#"{"text":"hi"}"#.utf8)
            let posted = try await store.appendMessages(appID: app, (1...3).map { _ in NewMessage(recipients: ["ann"], payload: payload) })
            let ids = posted.map(\.message.id)
            let ann = UserRef(appID: app, userID: "ann")
            #expect(try await store.unreadCount(of: ann) == 3)
            #expect(try await store.ack(device: phone.ref, upTo: 99) == 3, "never past the last sequence")
            #expect(try await store.ack(device: phone.ref, upTo: 1) == 3, "only forward")
            #expect(try await store.cursor(device: phone.ref) == 3)
            #expect(try await store.cursor(device: tablet.ref) == 0)
            // Read on both devices at once: counted once.
            async let onPhone = store.markRead(device: phone.ref, messageIDs: [ids[0], ids[1]])
            async let onTablet = store.markRead(device: tablet.ref, messageIDs: [ids[1]])
            let (a, b) = try await (onPhone, onTablet)
            #expect(Set(a + b) == [ids[0], ids[1]])
            #expect(try await store.unreadCount(of: ann) == 1)
            let start = try await store.sessionStart(for: ann, cursor: 3, window: 100, callsEndedSince: Date(timeIntervalSince1970: 0))
            #expect(start.lastSequence == 3 && start.badge == 1 && start.readUpToCursor == [ids[1], ids[0]])
            await #expect(throws: BeckonStoreError.deviceNotFound(appID: app, deviceID: "none")) {
                try await store.ack(device: DeviceRef(appID: app, deviceID: "none"), upTo: 1)
            }
        }
    }

    @Test func twoNodesClaimDisjointPushesAndADeadNodesClaimsComeBackAfterTheLease() async throws {
        try await withStore { store in
            let app = Self.unique("chat")
            try await store.createApp(.fixture(app))
            let phone = try await store.registerDevice(.fixture(app: app, device: "phone", user: "ann", pushToken: String(repeating: "cd", count: 32)))
            let pushes = try (1...20).map { n -> OutboxPush in
                let notification = try APNSRenderedNotification(
                    APNSAlertNotification(badge: n, apnsID: UUID()), bundleID: "com.example.\(app)")
                return OutboxPush(
                    device: phone.ref, tokenKind: .remote, reason: .alert, strategy: .content, notification: notification,
                    messageCount: 1, ringingCallID: nil, ringingUntil: nil, createdAt: Date(timeIntervalSince1970: 1_000 + Double(n)))
            }
            try await store.saveDelivery(DeliveryBatch(pushes: pushes))
            let other = try PostgresStore(url: Self.url!, logger: Logger(label: "beckon.store.test"))
            try await withThrowingTaskGroup(of: Void.self) { tasks in
                tasks.addTask { await other.run() }
                let now = Date(timeIntervalSince1970: 2_000), lease = Date(timeIntervalSince1970: 2_030)
                async let first = store.claimPushes(appID: app, before: now, limit: 12, leaseUntil: lease)
                async let second = other.claimPushes(appID: app, before: now, limit: 12, leaseUntil: lease)
                let (a, b) = try await (first, second)
                #expect(a.count + b.count == 20)
                #expect(Set(a.map(\.id)).isDisjoint(with: b.map(\.id)), "no push claimed twice")
                #expect(a.first.map { pushes.contains($0) } ?? true, "the rendered request as decided")
                // Node one sends its pushes; node two dies. Its claims come due when the lease ends.
                for push in a { try await store.completePush(id: push.id, result: .sent(at: now)) }
                #expect(try await store.claimPushes(appID: app, before: now.addingTimeInterval(10), limit: 50, leaseUntil: lease).isEmpty)
                let retaken = try await store.claimPushes(
                    appID: app, before: lease.addingTimeInterval(1), limit: 50, leaseUntil: lease.addingTimeInterval(30))
                #expect(Set(retaken.map(\.id)) == Set(b.map(\.id)))
                tasks.cancelAll()
            }
        }
    }

    @Test func aCallEndsOnceWhicheverNodeHearsItFirst() async throws {
        try await withStore { store in
            let app = Self.unique("chat")
            try await store.createApp(.fixture(app))
            let call = try await store.appendMessages(
                appID: app, [NewMessage(recipients: ["ann", "bob"], kind: .call, payload: Data("{}".utf8))])[0].message.id
            let at = Date(timeIntervalSince1970: 1_000)
            #expect(try await store.endCall(appID: app, callID: call, outcome: "answered-elsewhere", at: at)
                == .ended(users: [UserRef(appID: app, userID: "ann"), UserRef(appID: app, userID: "bob")], at: at))
            #expect(try await store.endCall(appID: app, callID: call, outcome: "declined", at: at.addingTimeInterval(5))
                == .alreadyEnded(outcome: "answered-elsewhere", at: at))
            #expect(try await store.endedCalls(appID: app, callIDs: [call, "other"]) == [call])
            await #expect(throws: BeckonStoreError.callNotFound("nope")) {
                try await store.endCall(appID: app, callID: "nope", outcome: "declined", at: at)
            }
            #expect(try await store.pushRecords(appID: app, since: Date(timeIntervalSince1970: 0)).isEmpty)
        }
    }
}
