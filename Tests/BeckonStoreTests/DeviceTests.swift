import BeckonProtocol
import Foundation
import Testing

@testable import BeckonStore

@Suite struct DeviceTests {
    @Test func registerIsAnUpsertByAppAndDeviceID() async throws {
        let clock = TestClock()
        try await withEachStore(clock: clock) { store in
            try await store.createApp(.fixture())
            var registration = DeviceRegistration.fixture(device: "phone", user: "ann", pushToken: token("A").uppercased())
            registration.capabilities = DeviceCapabilities(
                notificationServiceExtension: true, backgroundModes: ["remote-notification", "voip"])
            registration.locale = "fr-CA"
            registration.appVersion = "1.0"
            let first = try await store.registerDevice(registration)
            #expect(first.pushToken == token("A"))  // normalized to lowercase
            #expect(first.pushTokenRegisteredAt == clock.now)
            #expect(first.voipToken == nil && first.voipTokenRegisteredAt == nil)
            #expect(first.capabilities.backgroundModes == ["remote-notification", "voip"])
            #expect(first.createdAt == clock.now && first.updatedAt == clock.now)

            clock.advance(by: 60)
            registration.voipToken = token("V")
            registration.appVersion = "1.1"
            registration.capabilities.filtering = true
            let second = try await store.registerDevice(registration)
            #expect(second.createdAt == first.createdAt)
            #expect(second.updatedAt == clock.now)
            // Registering the same token again is a new registration (APNs' 410 rule).
            #expect(second.pushTokenRegisteredAt == clock.now)
            #expect(second.voipToken == token("V") && second.voipTokenRegisteredAt == clock.now)
            #expect(second.appVersion == "1.1" && second.capabilities.filtering)

            #expect(try await store.devices(of: UserRef(appID: "chat", userID: "ann")) == [second])
            #expect(try await store.device(second.ref) == second)

            // Dropping a token (notifications turned off) removes it.
            registration.pushToken = nil
            let third = try await store.registerDevice(registration)
            #expect(third.pushToken == nil && third.pushTokenRegisteredAt == nil)
        }
    }

    @Test func tokenLookupIsPerAppAndKind() async throws {
        try await withEachStore { store in
            try await store.createApp(.fixture("chat"))
            try await store.createApp(.fixture("mail"))
            try await store.registerDevice(.fixture(device: "phone", user: "ann", pushToken: token("A"), voipToken: token("V")))
            try await store.registerDevice(.fixture(app: "mail", device: "phone", user: "ann", pushToken: token("M")))

            #expect(try await store.device(appID: "chat", token: token("A").uppercased(), kind: .remote)?.id == "phone")
            #expect(try await store.device(appID: "chat", token: token("V"), kind: .voip)?.id == "phone")
            #expect(try await store.device(appID: "chat", token: token("V"), kind: .remote) == nil)
            #expect(try await store.device(appID: "chat", token: token("M"), kind: .remote) == nil)
            #expect(try await store.device(appID: "mail", token: token("M"), kind: .remote)?.appID == "mail")
            #expect(try await store.device(appID: "chat", token: "not hex", kind: .remote) == nil)
        }
    }

    @Test func aTokenMovesToTheDeviceThatRegistersItLast() async throws {
        try await withEachStore { store in
            try await store.createApp(.fixture())
            try await store.registerDevice(.fixture(device: "old-install", user: "ann", pushToken: token("A"), voipToken: token("V")))
            try await store.registerDevice(.fixture(device: "new-install", user: "ann", pushToken: token("A")))
            #expect(try await store.device(appID: "chat", token: token("A"), kind: .remote)?.id == "new-install")
            let old = try #require(try await store.device(DeviceRef(appID: "chat", deviceID: "old-install")))
            #expect(old.pushToken == nil)
            #expect(old.voipToken == token("V"))
        }
    }

    @Test func aDeadTokenIsRemovedOnlyIfNotRegisteredSinceAPNsTimestamp() async throws {
        let clock = TestClock()
        try await withEachStore(clock: clock) { store in
            try await store.createApp(.fixture())
            let phone = DeviceRef(appID: "chat", deviceID: "phone")
            try await store.registerDevice(.fixture(device: "phone", user: "ann", pushToken: token("A")))
            let registeredAt = clock.now

            // APNs says it died before the device registered it (again): keep it.
            #expect(try await !store.removeToken(phone, kind: .remote, token: token("A"), invalidSince: registeredAt - 1))
            // A different token than the one APNs answered about: keep.
            #expect(try await !store.removeToken(phone, kind: .remote, token: token("B"), invalidSince: registeredAt + 1))
            #expect(try await store.device(phone)?.pushToken == token("A"))
            // Died after it was registered: remove.
            #expect(try await store.removeToken(phone, kind: .remote, token: token("A"), invalidSince: registeredAt + 1))
            #expect(try await store.device(phone)?.pushToken == nil)
        }
    }

    @Test func registrationsAreChecked() async throws {
        try await withEachStore { store in
            try await store.createApp(.fixture(environments: [.production]))
            await #expect(throws: BeckonStoreError.appNotFound("mail")) {
                try await store.registerDevice(.fixture(app: "mail", device: "phone", user: "ann"))
            }
            await #expect(throws: BeckonStoreError.self) {
                try await store.registerDevice(.fixture(device: "phone", user: "ann", environment: .sandbox))
            }
            await #expect(throws: BeckonStoreError.invalidArgument(field: "pushToken", reason: "must be an even number of hex digits")) {
                try await store.registerDevice(.fixture(device: "phone", user: "ann", pushToken: "abc"))
            }
            await #expect(throws: BeckonStoreError.self) {
                try await store.registerDevice(.fixture(device: "", user: "ann"))
            }
        }
    }

    @Test func deleteRemovesTheDeviceAndItsCursor() async throws {
        try await withEachStore { store in
            try await store.createApp(.fixture())
            let phone = DeviceRef(appID: "chat", deviceID: "phone")
            try await store.registerDevice(.fixture(device: "phone", user: "ann", pushToken: token("A")))
            _ = try await store.appendMessages(appID: "chat", [NewMessage(recipients: ["ann"])])
            try await store.ack(device: phone, upTo: 1)
            #expect(try await store.deleteDevice(phone))
            #expect(try await !store.deleteDevice(phone))
            #expect(try await store.device(phone) == nil)
            #expect(try await store.device(appID: "chat", token: token("A"), kind: .remote) == nil)
            // Registered again, it starts over.
            try await store.registerDevice(.fixture(device: "phone", user: "ann"))
            #expect(try await store.cursor(device: phone) == 0)
        }
    }
}
