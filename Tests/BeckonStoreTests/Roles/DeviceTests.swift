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

    /// The planner reads the devices of many users, and many devices' states, in one call: every
    /// user asked for gets an entry (empty without devices), each device appears once, and another
    /// app's devices of the same user ids stay out, however many keys a call has (SQLite reads them
    /// in chunks of up to 256).
    @Test func readsOfManyKeysFindEachRowOnce() async throws {
        try await withEachStore { store in
            try await store.createApp(.fixture("chat"))
            try await store.createApp(.fixture("mail"))
            // 300 users: user i has i % 3 devices (none, one, two).
            let users = (0..<300).map { UserRef(appID: "chat", userID: "u\($0)") }
            var expected: [UserRef: [String]] = [:]
            for (i, user) in users.enumerated() {
                expected[user] = (0..<(i % 3)).map { "d\(i)-\($0)" }
                for device in expected[user]! {
                    try await store.registerDevice(.fixture(device: device, user: user.userID))
                }
            }
            try await store.registerDevice(.fixture(app: "mail", device: "d2-0", user: "u2"))
            let mail = UserRef(appID: "mail", userID: "u2")

            // Asked twice for one user, and for a user of the other app.
            let found = try await store.devices(of: users + [users[2], mail])
            #expect(found.count == 301)
            #expect(found.mapValues { $0.map(\.id) } == expected.merging([mail: ["d2-0"]]) { $1 })
            #expect(found[mail]?.first?.appID == "mail" && found[users[2]]?.allSatisfy { $0.appID == "chat" } == true)

            let refs = expected.values.joined().map { DeviceRef(appID: "chat", deviceID: $0) }
            #expect(refs.count == 300)
            let devices = try await store.devices(refs + [DeviceRef(appID: "chat", deviceID: "none")])
            #expect(Set(devices.keys) == Set(refs))
            #expect(devices.allSatisfy { $0 == $1.ref })

            // Saved states for every other device; a read of all of them finds just those.
            let saved = refs.enumerated().filter { $0.offset % 2 == 0 }.map(\.element)
            try await store.saveDelivery(DeliveryBatch(states: saved.map {
                DeliveryState(device: $0, planner: Data($0.deviceID.utf8), nextDeadline: nil, unreachable: false, version: 0)
            }))
            let states = try await store.deliveryStates(refs)
            #expect(Set(states.keys) == Set(saved))
            #expect(states.allSatisfy { $0 == $1.device && $1.planner == Data($0.deviceID.utf8) && $1.version == 1 })
        }
    }
}
