@testable import BeckonServer
import BeckonStore
import Foundation
import Hummingbird
import HummingbirdTesting
import Testing

@Suite struct DevicesAPITests {
    typealias Fixture = APITestFixture

    @Test func registerAnswersTheDeviceAndACredentialOnce() async throws {
        try await Fixture.with { fixture, client in
            let body = #"""
                {"deviceId":"phone-1","bundleId":"com.example.chat","environment":"sandbox",
                 "tokens":{"remote":"AABBCC","voip":"ddeeff"},
                 "capabilities":{"notificationServiceExtension":true,"filtering":false,"backgroundModes":["voip","remote-notification"]},
                 "locale":"fr-CA","appVersion":"2.1"}
                """#
            let response = try await client.execute(
                uri: "/v1/devices", method: .post,
                headers: Fixture.headers(bearer: fixture.userToken(user: "alice")), body: ByteBuffer(string: body))
            #expect(response.status == .created)
            let json = try #require(Fixture.json(response))
            #expect(json["credential"]?.string?.hasPrefix("bkd_") == true)
            #expect(json["device"]?["userId"]?.string == "alice")
            #expect(json["device"]?["tokens"]?["remote"]?.string == "aabbcc")
            #expect(json["device"]?["capabilities"]?["backgroundModes"] == .array([.string("remote-notification"), .string("voip")]))
            let stored = try #require(try await fixture.store.device(DeviceRef(appID: "chat", deviceID: "phone-1")))
            #expect(stored.environment == .sandbox)
            #expect(stored.voipToken == "ddeeff")
            #expect(stored.capabilities.notificationServiceExtension)
            #expect(stored.locale == "fr-CA")
            // Only the hash is kept: the store authenticates the credential, it never shows it.
            #expect(try await fixture.store.authenticateDevice(credential: json["credential"]!.string!)?.id == "phone-1")
        }
    }

    @Test func anotherUsersDeviceMovesOnlyWithItsCurrentCredential() async throws {
        try await Fixture.with { fixture, client in
            let aliceCredential = try await fixture.register(client, user: "alice", device: "phone-1", token: "aa11")
            let body = #"{"deviceId":"phone-1","bundleId":"com.example.chat","environment":"production","tokens":{"remote":"bb22"}}"#
            func register(_ body: String, as user: String) async throws -> TestResponse {
                try await client.execute(
                    uri: "/v1/devices", method: .post, headers: Fixture.headers(bearer: fixture.userToken(user: user)),
                    body: ByteBuffer(string: body))
            }

            // Mallory's valid user token is not enough to take Alice's install.
            let refused = try await register(body, as: "mallory")
            #expect(refused.status == .conflict)
            #expect(Fixture.error(refused)?.code == "device_owned_by_another_user")
            let withWrongCredential = try await register(
                body.dropLast() + #","previousCredential":"bkd_wrong"}"#, as: "mallory")
            #expect(withWrongCredential.status == .conflict)
            let stillAlice = try #require(try await fixture.store.device(DeviceRef(appID: "chat", deviceID: "phone-1")))
            #expect(stillAlice.userID == "alice")
            #expect(stillAlice.pushToken == "aa11")
            #expect(try await fixture.store.authenticateDevice(credential: aliceCredential)?.id == "phone-1")

            // Alice signs out and Bob signs in on the same phone: the app holds the credential.
            let moved = try await register(body.dropLast() + #","previousCredential":"\#(aliceCredential)"}"#, as: "bob")
            #expect(moved.status == .created)
            #expect(Fixture.json(moved)?["device"]?["userId"]?.string == "bob")
            #expect(try await fixture.store.authenticateDevice(credential: aliceCredential) == nil)

            // The same user registering again (a reinstall that lost its credential) needs nothing.
            #expect(try await register(body, as: "bob").status == .created)
        }
    }

    @Test func aContentKeyIsThirtyTwoBytesOfBase64AndNeverShownBack() async throws {
        try await Fixture.with { fixture, client in
            func register(_ key: String) async throws -> TestResponse {
                let body = #"{"deviceId":"phone-1","bundleId":"com.example.chat","environment":"sandbox","tokens":{},"contentKey":"\#(key)"}"#
                return try await client.execute(
                    uri: "/v1/devices", method: .post, headers: Fixture.headers(bearer: fixture.userToken(user: "alice")),
                    body: ByteBuffer(string: body))
            }
            let short = try await register(Data(count: 16).base64EncodedString())
            #expect(short.status == .badRequest)
            #expect(Fixture.error(short)?.message.hasPrefix("contentKey:") == true)
            let key = Data((0..<32).map { UInt8($0) })
            let registered = try await register(key.base64EncodedString())
            #expect(registered.status == .created)
            #expect(!String(buffer: registered.body).contains(key.base64EncodedString()))
            #expect(try await fixture.store.device(DeviceRef(appID: "chat", deviceID: "phone-1"))?.contentKey == key)
        }
    }

    @Test func rfc8599PushParametersAreAnAlternativeBody() async throws {
        try await Fixture.with { fixture, client in
            // As Linphone sends them (seed 003): apns.dev is the sandbox.
            let body = #"""
                {"deviceId":"linphone","pushParameters":{"pn-provider":"apns.dev",
                 "pn-param":"TEAM123456.com.example.chat.remote&voip","pn-prid":"00fc13adff78512a:voip&c11292f7b74733d0:remote"}}
                """#
            let response = try await client.execute(
                uri: "/v1/devices", method: .post,
                headers: Fixture.headers(bearer: fixture.userToken(user: "alice")), body: ByteBuffer(string: body))
            #expect(response.status == .created)
            let device = try #require(try await fixture.store.device(DeviceRef(appID: "chat", deviceID: "linphone")))
            #expect(device.environment == .sandbox)
            #expect(device.pushToken == "c11292f7b74733d0")
            #expect(device.voipToken == "00fc13adff78512a")
            #expect(device.bundleID == "com.example.chat")

            // Another team's parameters are refused, naming the field.
            let wrongTeam = #"""
                {"deviceId":"x","pushParameters":{"pn-provider":"apns","pn-param":"OTHERTEAM.com.example.chat.remote","pn-prid":"abcd"}}
                """#
            let refused = try await client.execute(
                uri: "/v1/devices", method: .post,
                headers: Fixture.headers(bearer: fixture.userToken(user: "alice")), body: ByteBuffer(string: wrongTeam))
            #expect(refused.status == .badRequest)
            #expect(Fixture.error(refused)?.message.hasPrefix("pushParameters.pn-param") == true)
        }
    }

    @Test func userTokensAreChecked() async throws {
        try await Fixture.with { fixture, client in
            let body = ByteBuffer(string: #"{"deviceId":"d","bundleId":"com.example.chat","environment":"production","tokens":{}}"#)
            let refused: [(String?, String)] = [
                (nil, "no token"),
                (fixture.userToken(user: "alice", expiresIn: -120), "expired beyond the 60 s leeway"),
                (fixture.userToken(user: "alice", secret: "another-secret-another-secret-1234"), "wrong key"),
                // Signed by chat's backend but naming mail: mail's key does not verify it.
                (fixture.userToken(app: "mail", user: "alice", secret: Fixture.chatSecret), "wrong audience"),
                (fixture.userToken(app: "nope", user: "alice"), "unknown audience"),
                (fixture.userToken(user: "alice", alg: "none"), "alg none"),
                ("a.b.c", "garbage"),
                (fixture.chatKey, "an API key"),
            ]
            for (token, why) in refused {
                let response = try await client.execute(
                    uri: "/v1/devices", method: .post, headers: Fixture.headers(bearer: token), body: body)
                #expect(response.status == .unauthorized, "\(why)")
            }
            // Within the leeway, an expired token still passes (clocks differ).
            let skewed = try await client.execute(
                uri: "/v1/devices", method: .post,
                headers: Fixture.headers(bearer: fixture.userToken(user: "alice", expiresIn: -30)), body: body)
            #expect(skewed.status == .created)
        }
    }

    @Test func registrationFieldsAreValidated() async throws {
        try await Fixture.with { fixture, client in
            let cases: [(String, String)] = [
                (#"{"bundleId":"com.example.chat","environment":"production","tokens":{}}"#, "deviceId"),
                (#"{"deviceId":"d","bundleId":"com.other","environment":"production","tokens":{}}"#, "bundleId"),
                (#"{"deviceId":"d","bundleId":"com.example.chat","environment":"prod","tokens":{}}"#, "environment"),
                (#"{"deviceId":"d","bundleId":"com.example.chat","environment":"production","tokens":{"remote":"xyz"}}"#, "tokens.remote"),
                (#"{"deviceId":"d","bundleId":"com.example.chat","environment":"production","tokens":{"apns":"ab"}}"#, "tokens.apns"),
                (#"{"deviceId":"d","bundleId":"com.example.chat","environment":"production","capabilities":{"filtering":"yes"},"tokens":{}}"#, "capabilities.filtering"),
            ]
            for (body, field) in cases {
                let response = try await client.execute(
                    uri: "/v1/devices", method: .post,
                    headers: Fixture.headers(bearer: fixture.userToken(user: "alice")), body: ByteBuffer(string: body))
                #expect(response.status == .badRequest, "\(field)")
                #expect(Fixture.error(response)?.message.hasPrefix("\(field):") == true, "\(field)")
            }
            // mail accepts production devices only.
            let sandbox = try await client.execute(
                uri: "/v1/devices", method: .post,
                headers: Fixture.headers(bearer: fixture.userToken(app: "mail", user: "alice")),
                body: ByteBuffer(string: #"{"deviceId":"d","bundleId":"com.example.mail","environment":"sandbox","tokens":{}}"#))
            #expect(sandbox.status == .badRequest)
            #expect(Fixture.error(sandbox)?.message.hasPrefix("environment:") == true)
        }
    }

    @Test func updateAndDeleteWithTheDeviceCredential() async throws {
        try await Fixture.with { fixture, client in
            let credential = try await fixture.register(client, user: "alice", device: "phone")
            let other = try await fixture.register(client, user: "alice", device: "tablet", token: "0102")
            let update = ByteBuffer(string: #"{"tokens":{"remote":"ffee"},"capabilities":{"filtering":true},"appVersion":"3.0"}"#)

            let updated = try await client.execute(
                uri: "/v1/devices/phone", method: .put, headers: Fixture.headers(bearer: credential), body: update)
            #expect(updated.status == .ok)
            #expect(Fixture.json(updated)?["tokens"]?["remote"]?.string == "ffee")
            #expect(Fixture.json(updated)?["userId"]?.string == "alice")
            let device = try #require(try await fixture.store.device(DeviceRef(appID: "chat", deviceID: "phone")))
            #expect(device.capabilities.filtering)
            #expect(device.appVersion == "3.0")
            #expect(device.environment == .production)

            // Tokens must be restated (a token presented counts as registered now).
            let noTokens = try await client.execute(
                uri: "/v1/devices/phone", method: .put, headers: Fixture.headers(bearer: credential),
                body: ByteBuffer(string: #"{"appVersion":"3.1"}"#))
            #expect(noTokens.status == .badRequest)

            // Another device's credential: 403. None: 401.
            let forbidden = try await client.execute(
                uri: "/v1/devices/phone", method: .put, headers: Fixture.headers(bearer: other), body: update)
            #expect(forbidden.status == .forbidden)
            let anonymous = try await client.execute(
                uri: "/v1/devices/phone", method: .put, headers: Fixture.headers(), body: update)
            #expect(anonymous.status == .unauthorized)
            let otherDelete = try await client.execute(
                uri: "/v1/devices/phone", method: .delete, headers: Fixture.headers(bearer: other, contentType: nil))
            #expect(otherDelete.status == .forbidden)

            let deleted = try await client.execute(
                uri: "/v1/devices/phone", method: .delete, headers: Fixture.headers(bearer: credential, contentType: nil))
            #expect(deleted.status == .noContent)
            #expect(try await fixture.store.device(DeviceRef(appID: "chat", deviceID: "phone")) == nil)
            // The credential died with the device.
            let after = try await client.execute(
                uri: "/v1/devices/phone", method: .delete, headers: Fixture.headers(bearer: credential, contentType: nil))
            #expect(after.status == .unauthorized)

            // The backend may delete its app's devices; another app's key finds nothing.
            let wrongApp = try await client.execute(
                uri: "/v1/devices/tablet", method: .delete, headers: Fixture.headers(bearer: fixture.mailKey, contentType: nil))
            #expect(wrongApp.status == .notFound)
            let byBackend = try await client.execute(
                uri: "/v1/devices/tablet", method: .delete, headers: Fixture.headers(bearer: fixture.chatKey, contentType: nil))
            #expect(byBackend.status == .noContent)
        }
    }
}
