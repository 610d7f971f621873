import Foundation
import GRDB
import Testing

@testable import BeckonStore

@Suite struct DurabilityTests {
    @Test func everythingSurvivesCloseAndReopen() async throws {
        try await withTemporaryDirectory { directory in
            let path = directory + "/data/beckon.sqlite"  // the directory does not exist yet
            let phone = DeviceRef(appID: "chat", deviceID: "phone")
            let ann = UserRef(appID: "chat", userID: "ann")

            let first = try SQLiteStore(path: path)
            let app = try await first.createApp(.fixture())
            let key = try await first.createAPIKey(appID: "chat", name: "backend")
            let device = try await first.registerDevice(.fixture(device: "phone", user: "ann", pushToken: token("A")))
            let credential = try await first.issueDeviceCredential(phone)
            let appended = try await first.appendMessages(
                appID: "chat", (1...3).map { NewMessage(recipients: ["ann"], payload: text("\($0)"), idempotencyKey: "k\($0)") })
            try await first.ack(device: phone, upTo: 2)
            _ = try await first.markRead(device: phone, messageIDs: [appended[0].message.id])
            try first.close()

            let second = try SQLiteStore(path: path)
            defer { try? second.close() }
            #expect(try await second.app(id: "chat") == app)
            #expect(try await second.authenticateAPIKey(key.secret) == key.key)
            #expect(try await second.authenticateDevice(credential: credential)?.ref == phone)
            #expect(try await second.device(phone)?.pushToken == device.pushToken)
            #expect(try await second.messages(for: ann, after: 0, limit: 10).map(\.message) == appended.map(\.message))
            #expect(try await second.cursor(device: phone) == 2)
            #expect(try await second.unreadCount(of: ann) == 2)
            // Idempotency keys and sequence counters carry over too.
            let retry = try await second.appendMessages(appID: "chat", [NewMessage(recipients: ["ann"], payload: text("1"), idempotencyKey: "k1")])
            #expect(retry[0].isDuplicate && retry[0].message.id == appended[0].message.id)
            let next = try await second.appendMessages(appID: "chat", [NewMessage(recipients: ["ann"])])
            #expect(next[0].positions[0].sequence == 4)
        }
    }

    @Test func theWriterIsInWALModeWithFullSync() async throws {
        try await withStore { store in
            let (journal, synchronous, foreignKeys) = try await store.writer.write { db in
                (try String.fetchOne(db, sql: "PRAGMA journal_mode"),
                 try Int.fetchOne(db, sql: "PRAGMA synchronous"),
                 try Bool.fetchOne(db, sql: "PRAGMA foreign_keys"))
            }
            #expect(journal == "wal")
            #expect(synchronous == 2)  // FULL
            #expect(foreignKeys == true)
        }
    }

    @Test func migrationsRunOnAnEmptyFileAndNotAgainOnReopen() async throws {
        try await withTemporaryDirectory { directory in
            let path = directory + "/beckon.sqlite"
            let store = try SQLiteStore(path: path)
            let applied = try await store.appliedMigrations()
            #expect(applied == ["v1", "v2-delivery", "v3-content-key", "v4-unread-counters", "v5-unread-expiry-index", "v6-rendered-outbox", "v7-call-ends", "v8-delivery-versions"])
            let tables = try await store.writer.read { db in
                try String.fetchAll(db, sql: "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'grdb_%' ORDER BY name")
            }
            #expect(tables == [
                "api_key", "app", "call_end", "delivery_state", "device", "device_cursor", "mailbox", "message", "message_read",
                "push_outbox", "unread_expiring", "user_sequence",
            ])
            try await store.createApp(.fixture())
            try store.close()

            for _ in 0..<2 {
                let reopened = try SQLiteStore(path: path)
                #expect(try await reopened.appliedMigrations() == [
                    "v1", "v2-delivery", "v3-content-key", "v4-unread-counters", "v5-unread-expiry-index", "v6-rendered-outbox", "v7-call-ends", "v8-delivery-versions",
                ])
                #expect(try await reopened.apps().map(\.id) == ["chat"])
                try reopened.close()
            }
        }
    }

    @Test func aFileFromANewerBeckonIsRefused() async throws {
        try await withTemporaryDirectory { directory in
            let path = directory + "/beckon.sqlite"
            try SQLiteStore(path: path).close()
            let pool = try DatabasePool(path: path)
            try await pool.write { db in
                try db.execute(sql: "INSERT INTO grdb_migrations (identifier) VALUES ('v999-from-the-future')")
            }
            try pool.close()
            #expect(throws: BeckonStoreError.schemaTooNew) {
                try SQLiteStore(path: path)
            }
        }
    }

    @Test func inMemoryStoreWorksForQuickTests() async throws {
        let store = try SQLiteStore(location: .inMemory)
        try await store.createApp(.fixture())
        let appended = try await store.appendMessages(appID: "chat", [NewMessage(recipients: ["ann"])])
        #expect(appended[0].positions[0].sequence == 1)
    }

    @Test func appsAreSavedAndChecked() async throws {
        let clock = TestClock()
        try await withStore(clock: clock) { store in
            var app = App.fixture()
            app.deliveryDefaults = text(#"{"strategy":"wake"}"#)
            app.limits.maxPayloadBytes = 1024
            app.apnsKeyID = "KEY1234567"
            app.apnsKeyReference = "/etc/beckon/AuthKey.p8"
            let created = try await store.createApp(app)
            #expect(created.createdAt == clock.now)
            #expect(created.limits.maxPayloadBytes == 1024 && created.apnsKeyReference == app.apnsKeyReference)
            await #expect(throws: BeckonStoreError.alreadyExists("chat")) { try await store.createApp(app) }

            clock.advance(by: 10)
            app.environments = [.sandbox]
            let saved = try await store.saveApp(app)
            #expect(saved.createdAt == created.createdAt && saved.updatedAt == clock.now)
            #expect(saved.environments == [.sandbox])
            #expect(try await store.apps() == [saved])

            app.deliveryDefaults = text("[1]")
            await #expect(throws: BeckonStoreError.invalidArgument(field: "deliveryDefaults", reason: "must be a JSON object")) {
                try await store.saveApp(app)
            }
        }
    }
}
