import BeckonClient
import BeckonClientTestSupport
import BeckonProtocol
import BeckonStore
import Crypto
import Foundation
import Testing

/// The SDK registers the install and keeps its tokens current, against a real node.
@Suite struct DeviceRegistrarEndToEndTests {
    /// The keychain, in memory; `locked` plays the phone before its first unlock.
    final class MemoryCredentials: CredentialStore {
        struct Unavailable: Error {}
        let value = Locked<String?>(nil)
        let locked = Locked(false)
        func credential() throws -> String {
            guard let credential = try load() else { throw CocoaError(.fileReadNoSuchFile) }
            return credential
        }
        func load() throws -> String? {
            if locked.withLock({ $0 }) { throw Unavailable() }
            return value.withLock { $0 }
        }
        func save(_ credential: String) throws { value.withLock { $0 = credential } }
        func delete() throws { value.withLock { $0 = nil } }
    }

    /// What the app's backend signs for its user (an HS256 JWT, docs/client-sdk.md step 4).
    static func userToken(_ user: String, secret: String = "chat-user-token-secret-0123456789abcdef") -> String {
        func encode(_ data: Data) -> String {
            data.base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
                .replacingOccurrences(of: "=", with: "")
        }
        let header = encode(Data(#"{"alg":"HS256","typ":"JWT"}"#.utf8))
        let claims = encode(Data(#"{"aud":"chat","sub":"\#(user)","exp":\#(Int(Date().timeIntervalSince1970) + 300)}"#.utf8))
        let signature = HMAC<SHA256>.authenticationCode(
            for: Data("\(header).\(claims)".utf8), using: SymmetricKey(data: Data(secret.utf8)))
        return "\(header).\(claims).\(encode(Data(signature)))"
    }

    static let registration = DeviceRegistration(
        deviceID: "iphone-1", bundleID: "com.example.chat", environment: "sandbox",
        capabilities: DeviceCapabilities(notificationServiceExtension: true, backgroundModes: ["remote-notification"]),
        locale: "fr-CA", appVersion: "1.0")

    @Test func registersOnceKeepsTheTokensCurrentAndRegistersAgainWhenTheServerForgotIt() async throws {
        try await ClientTestServer.with { server in
            let credentials = MemoryCredentials()
            let asked = Locked(0)
            let registrar = DeviceRegistrar(baseURL: server.baseURL, registration: Self.registration, credentials: credentials) {
                asked.withLock { $0 += 1 }
                return Self.userToken("alice")
            }
            let alice = UserRef(appID: "chat", userID: "alice")

            // iOS's first APNs token: registered, the credential kept.
            try await registrar.remoteTokenChanged(Data(repeating: 0xab, count: 32))
            let first = try credentials.credential()
            #expect(first.hasPrefix("bkd_"))
            var device = try #require(try await server.store.devices(of: alice).first)
            #expect(device.pushToken == String(repeating: "ab", count: 32))
            #expect(device.capabilities.notificationServiceExtension)
            #expect(device.appVersion == "1.0")

            // PushKit's token: an update with the credential; the APNs token restated, not lost.
            try await registrar.voipTokenChanged(Data(repeating: 0xcd, count: 32))
            device = try #require(try await server.store.devices(of: alice).first)
            #expect(device.voipToken == String(repeating: "cd", count: 32))
            #expect(device.pushToken == String(repeating: "ab", count: 32))
            #expect(asked.withLock { $0 } == 1, "no new registration")
            #expect(try credentials.credential() == first)

            // Deleted on the server (the user signed out elsewhere): the next token registers anew.
            let deleted = try await server.request("DELETE", "v1/devices/iphone-1", bearer: first)
            #expect(deleted.status == 204)
            try await registrar.remoteTokenChanged(Data(repeating: 0xef, count: 32))
            #expect(asked.withLock { $0 } == 2)
            #expect(try credentials.credential() != first)
            device = try #require(try await server.store.devices(of: alice).first)
            #expect(device.pushToken == String(repeating: "ef", count: 32))
            #expect(device.voipToken == String(repeating: "cd", count: 32))
        }
    }

    @Test func aUserTokenTheServerRefusesKeepsNothing() async throws {
        try await ClientTestServer.with { server in
            let credentials = MemoryCredentials()
            let registrar = DeviceRegistrar(baseURL: server.baseURL, registration: Self.registration, credentials: credentials) {
                Self.userToken("alice", secret: "not-the-apps-secret-0123456789abcdef")
            }
            await #expect(throws: RegistrationError.userTokenRefused) {
                try await registrar.remoteTokenChanged(Data(repeating: 0xab, count: 32))
            }
            #expect((try? credentials.credential()) == nil)
        }
    }

    /// Before the first unlock after a restart iOS may launch the app (a VoIP push) with the
    /// keychain unreadable: nothing is sent, so the install does not become a second device; after
    /// the unlock it registers once, with an install id minted then and kept for later launches.
    @Test func beforeTheFirstUnlockNothingIsRegisteredAndAfterItOnceWithAKeptID() async throws {
        try await ClientTestServer.with { server in
            let credentials = MemoryCredentials()
            let ids = MemoryCredentials()
            credentials.locked.withLock { $0 = true }
            ids.locked.withLock { $0 = true }
            let asked = Locked(0)
            var registration = Self.registration
            registration.deviceID = ""
            let launch = {
                DeviceRegistrar(baseURL: server.baseURL, registration: registration, credentials: credentials, installationIDs: ids) {
                    asked.withLock { $0 += 1 }
                    return Self.userToken("alice")
                }
            }
            let early = launch()
            await #expect(throws: RegistrationError.credentialUnavailable) {
                try await early.voipTokenChanged(Data(repeating: 0xcd, count: 32))
            }
            #expect(asked.withLock { $0 } == 0, "no registration while locked")
            #expect(try ids.value.withLock { $0 } == nil, "no id minted while locked")

            credentials.locked.withLock { $0 = false }
            ids.locked.withLock { $0 = false }
            try await early.voipTokenChanged(Data(repeating: 0xcd, count: 32))
            let id = try #require(ids.value.withLock { $0 })
            // The next launch reads the same id and updates the same device.
            try await launch().remoteTokenChanged(Data(repeating: 0xab, count: 32))
            #expect(asked.withLock { $0 } == 1)
            #expect(ids.value.withLock { $0 } == id)
            let devices = try await server.store.devices(of: UserRef(appID: "chat", userID: "alice"))
            #expect(devices.map(\.id) == [id])
            #expect(devices.first?.pushToken == String(repeating: "ab", count: 32))
        }
    }
}
