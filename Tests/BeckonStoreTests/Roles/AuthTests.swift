import Foundation
import Testing

@testable import BeckonStore

@Suite struct AuthTests {
    @Test func apiKeysAuthenticateOnlyAsTheirOwnApp() async throws {
        try await withEachStore { store in
            try await store.createApp(.fixture("chat"))
            try await store.createApp(.fixture("mail"))
            let chatKey = try await store.createAPIKey(appID: "chat", name: "backend")
            let mailKey = try await store.createAPIKey(appID: "mail", name: nil)
            #expect(chatKey.secret.hasPrefix(chatKey.key.prefix + "_"))

            #expect(try await store.authenticateAPIKey(chatKey.secret) == chatKey.key)
            #expect(try await store.authenticateAPIKey(chatKey.secret)?.appID == "chat")
            #expect(try await store.authenticateAPIKey(mailKey.secret)?.appID == "mail")

            // Wrong secret with a valid id, a mangled key, garbage, the empty string.
            let wrong = chatKey.key.prefix + "_" + String(repeating: "A", count: 43)
            #expect(try await store.authenticateAPIKey(wrong) == nil)
            #expect(try await store.authenticateAPIKey(String(chatKey.secret.dropLast())) == nil)
            #expect(try await store.authenticateAPIKey("Bearer nonsense") == nil)
            #expect(try await store.authenticateAPIKey("") == nil)
            // A device credential is not an API key, even for the same app.
            try await store.registerDevice(.fixture(device: "phone", user: "ann"))
            let credential = try await store.issueDeviceCredential(DeviceRef(appID: "chat", deviceID: "phone"))
            #expect(try await store.authenticateAPIKey(credential) == nil)

            #expect(try await store.apiKeys(appID: "chat").map(\.id) == [chatKey.key.id])
            #expect(try await !store.revokeAPIKey(appID: "mail", keyID: chatKey.key.id))  // not mail's key
            #expect(try await store.revokeAPIKey(appID: "chat", keyID: chatKey.key.id))
            #expect(try await store.authenticateAPIKey(chatKey.secret) == nil)
            #expect(try await store.authenticateAPIKey(mailKey.secret) != nil)

            await #expect(throws: BeckonStoreError.appNotFound("nope")) {
                try await store.createAPIKey(appID: "nope", name: nil)
            }
        }
    }

    /// Only hashes are stored (the SQLite file itself is checked in SQLiteStoreTests).
    @Test func theSecretIsNotStored() async throws {
        try await withEachStore { store in
            try await store.createApp(.fixture())
            let key = try await store.createAPIKey(appID: "chat", name: nil)
            try await store.registerDevice(.fixture(device: "phone", user: "ann"))
            let credential = try await store.issueDeviceCredential(DeviceRef(appID: "chat", deviceID: "phone"))
            let stored = try await everythingStored(store)
            #expect(stored.contains(key.key.id), "the dump holds the key's row")
            for secret in [key.secret, credential] {
                let random = String(secret.split(separator: "_").last!)
                #expect(!stored.contains(random) && !stored.contains(hex(Array(random.utf8))))
            }
        }
    }

    @Test func deviceCredentials() async throws {
        try await withEachStore { store in
            try await store.createApp(.fixture())
            let phone = DeviceRef(appID: "chat", deviceID: "phone")
            try await store.registerDevice(.fixture(device: "phone", user: "ann"))
            try await store.registerDevice(.fixture(device: "tablet", user: "ann"))
            #expect(try await store.device(phone)?.hasCredential == false)

            let first = try await store.issueDeviceCredential(phone)
            #expect(try await store.authenticateDevice(credential: first)?.ref == phone)
            #expect(try await store.device(phone)?.hasCredential == true)
            #expect(try await store.authenticateDevice(credential: first + "x") == nil)

            // A new credential replaces the old one.
            let second = try await store.issueDeviceCredential(phone)
            #expect(try await store.authenticateDevice(credential: first) == nil)
            #expect(try await store.authenticateDevice(credential: second)?.ref == phone)

            // Same user re-registering keeps it; another user signing in revokes it.
            try await store.registerDevice(.fixture(device: "phone", user: "ann"))
            #expect(try await store.authenticateDevice(credential: second)?.userID == "ann")
            try await store.registerDevice(.fixture(device: "phone", user: "bob"))
            #expect(try await store.authenticateDevice(credential: second) == nil)
            #expect(try await store.device(phone)?.hasCredential == false)

            await #expect(throws: BeckonStoreError.deviceNotFound(appID: "chat", deviceID: "watch")) {
                try await store.issueDeviceCredential(DeviceRef(appID: "chat", deviceID: "watch"))
            }

            // Registering and issuing in one step: the credential replaces the one before, also
            // when the device moves to another user (whose registration revokes it).
            let third = try await store.registerDeviceIssuingCredential(.fixture(device: "phone", user: "bob"))
            #expect(third.device.userID == "bob" && third.device.hasCredential)
            #expect(try await store.authenticateDevice(credential: third.credential)?.ref == phone)
            let fourth = try await store.registerDeviceIssuingCredential(.fixture(device: "phone", user: "ann"))
            #expect(try await store.authenticateDevice(credential: third.credential) == nil)
            #expect(try await store.authenticateDevice(credential: fourth.credential)?.userID == "ann")
        }
    }
}
