import Foundation
import Testing

@testable import BeckonStore

@Suite struct DurabilityTests {
    /// A restarted node finds everything: on SQLite a reopened file, on PostgreSQL a new pool.
    @Test func everythingSurvivesCloseAndReopen() async throws {
        try await withEachStoreReopened { open in
            let phone = DeviceRef(appID: "chat", deviceID: "phone")
            let ann = UserRef(appID: "chat", userID: "ann")

            let first = try await open()
            let app = try await first.createApp(.fixture())
            let key = try await first.createAPIKey(appID: "chat", name: "backend")
            let device = try await first.registerDevice(.fixture(device: "phone", user: "ann", pushToken: token("A")))
            let credential = try await first.issueDeviceCredential(phone)
            let appended = try await first.appendMessages(
                appID: "chat", (1...3).map { NewMessage(recipients: ["ann"], payload: text("\($0)"), idempotencyKey: "k\($0)") })
            try await first.ack(device: phone, upTo: 2)
            _ = try await first.markRead(device: phone, messageIDs: [appended[0].message.id])

            let second = try await open()
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

    @Test func appsAreSavedAndChecked() async throws {
        let clock = TestClock()
        try await withEachStore(clock: clock) { store in
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
