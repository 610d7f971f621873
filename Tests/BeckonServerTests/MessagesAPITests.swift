@testable import BeckonServer
import BeckonStore
import Foundation
import Hummingbird
import HummingbirdTesting
import Testing

@Suite struct MessagesAPITests {
    typealias Fixture = APITestFixture

    static let messageBody = #"""
        {"recipients":{"users":["alice"]},"kind":"message","payload":{"text":"hi","n":[1,2.5,true,null]},
         "notification":{"locKey":"NEW_MESSAGE","locArgs":["Bob"],"threadId":"t1"},"urgency":"high","ttlSeconds":3600}
        """#

    @Test func postThenFetchByID() async throws {
        try await Fixture.with { fixture, client in
            let credential = try await fixture.register(client, user: "alice", device: "phone-1")
            let posted = try await client.execute(
                uri: "/v1/messages", method: .post, headers: Fixture.headers(bearer: fixture.chatKey),
                body: ByteBuffer(string: Self.messageBody))
            #expect(posted.status == .accepted)
            let answer = try #require(Fixture.json(posted))
            let id = try #require(answer["id"]?.string)
            #expect(answer["duplicate"] == .bool(false))
            #expect(answer["positions"]?[0]?["userId"]?.string == "alice")
            #expect(answer["positions"]?[0]?["sequence"]?.number == 1)

            // Durable before the 2xx: the store has it now.
            #expect(try await fixture.store.lastSequence(of: UserRef(appID: "chat", userID: "alice")) == 1)

            let fetched = try await client.execute(
                uri: "/v1/messages/\(id)", method: .get, headers: Fixture.headers(bearer: credential, contentType: nil))
            #expect(fetched.status == .ok)
            let message = try #require(Fixture.json(fetched))
            #expect(message["id"]?.string == id)
            #expect(message["sequence"]?.number == 1)
            #expect(message["kind"]?.string == "message")
            #expect(message["urgency"]?.string == "high")
            #expect(message["payload"]?["text"]?.string == "hi")
            #expect(message["payload"]?["n"] == .array([.int(1), .double(2.5), .bool(true), .null]))
            #expect(message["notification"]?["locKey"]?.string == "NEW_MESSAGE")
            #expect(message["notification"]?["threadId"]?.string == "t1")
            #expect(message["expiresAt"]?.string != nil)
        }
    }

    @Test func deviceRecipientsResolveToTheirUsers() async throws {
        try await Fixture.with { fixture, client in
            _ = try await fixture.register(client, user: "bob", device: "bob-phone")
            let posted = try await client.execute(
                uri: "/v1/messages", method: .post, headers: Fixture.headers(bearer: fixture.chatKey),
                body: ByteBuffer(string: #"{"recipients":{"users":["alice"],"devices":["bob-phone"]}}"#))
            #expect(posted.status == .accepted)
            let answer = try #require(Fixture.json(posted))
            let users = Set([answer["positions"]?[0]?["userId"]?.string, answer["positions"]?[1]?["userId"]?.string])
            #expect(users == ["alice", "bob"])

            // A device of another app is not a recipient here.
            _ = try await fixture.register(client, app: "mail", user: "carol", device: "carol-phone")
            let foreign = try await client.execute(
                uri: "/v1/messages", method: .post, headers: Fixture.headers(bearer: fixture.chatKey),
                body: ByteBuffer(string: #"{"recipients":{"devices":["carol-phone"]}}"#))
            #expect(foreign.status == .badRequest)
            #expect(Fixture.error(foreign)?.message.hasPrefix("recipients.devices[0]") == true)
        }
    }

    @Test func retryWithTheSameKeyReturnsTheSameMessage() async throws {
        try await Fixture.with { fixture, client in
            var headers = Fixture.headers(bearer: fixture.chatKey)
            headers[HTTPFields.Element.Name("Idempotency-Key")!] = "order-42"
            let first = try await client.execute(
                uri: "/v1/messages", method: .post, headers: headers, body: ByteBuffer(string: Self.messageBody))
            #expect(first.status == .accepted)
            // The same content with its keys in another order and another spacing is the same.
            let reordered = #"""
                {"urgency":"high","ttlSeconds":3600,"kind":"message","payload":{"n":[1,2.5,true,null],"text":"hi"},
                 "recipients":{"users":["alice"]},"notification":{"threadId":"t1","locArgs":["Bob"],"locKey":"NEW_MESSAGE"}}
                """#
            let retry = try await client.execute(
                uri: "/v1/messages", method: .post, headers: headers, body: ByteBuffer(string: reordered))
            #expect(retry.status == .ok)
            #expect(Fixture.json(retry)?["id"] == Fixture.json(first)?["id"])
            #expect(Fixture.json(retry)?["duplicate"] == .bool(true))
            #expect(Fixture.json(retry)?["positions"] == Fixture.json(first)?["positions"])
            #expect(try await fixture.store.lastSequence(of: UserRef(appID: "chat", userID: "alice")) == 1)

            // The key in the body works the same as the header.
            let viaField = try await client.execute(
                uri: "/v1/messages", method: .post, headers: Fixture.headers(bearer: fixture.chatKey),
                body: ByteBuffer(string: #"{"recipients":{"users":["alice"]},"idempotencyKey":"k2"}"#))
            let viaFieldAgain = try await client.execute(
                uri: "/v1/messages", method: .post, headers: Fixture.headers(bearer: fixture.chatKey),
                body: ByteBuffer(string: #"{"recipients":{"users":["alice"]},"idempotencyKey":"k2"}"#))
            #expect(viaField.status == .accepted)
            #expect(viaFieldAgain.status == .ok)
            #expect(try await fixture.store.lastSequence(of: UserRef(appID: "chat", userID: "alice")) == 2)

            // Different content under a used key.
            let conflict = try await client.execute(
                uri: "/v1/messages", method: .post, headers: headers,
                body: ByteBuffer(string: #"{"recipients":{"users":["alice"]},"payload":"other"}"#))
            #expect(conflict.status == .conflict)
            #expect(Fixture.error(conflict)?.code == "idempotency_conflict")
            #expect(try await fixture.store.lastSequence(of: UserRef(appID: "chat", userID: "alice")) == 2)
        }
    }

    @Test func aDeviceReadsOnlyItsOwnUsersMailbox() async throws {
        try await Fixture.with { fixture, client in
            let alicePhone = try await fixture.register(client, user: "alice", device: "alice-phone", token: "01")
            let aliceTablet = try await fixture.register(client, user: "alice", device: "alice-tablet", token: "02")
            let bobPhone = try await fixture.register(client, user: "bob", device: "bob-phone", token: "03")
            let mailPhone = try await fixture.register(client, app: "mail", user: "alice", device: "alice-phone", token: "04")
            let posted = try await client.execute(
                uri: "/v1/messages", method: .post, headers: Fixture.headers(bearer: fixture.chatKey),
                body: ByteBuffer(string: #"{"recipients":{"users":["alice"]},"payload":{"secret":1}}"#))
            let id = try #require(Fixture.json(posted)?["id"]?.string)

            for (credential, status) in [
                (alicePhone, HTTPResponse.Status.ok), (aliceTablet, .ok),
                // Another user of the app, and the same user id in another app: 404, not 403,
                // so ids cannot be probed.
                (bobPhone, .notFound), (mailPhone, .notFound),
            ] {
                let response = try await client.execute(
                    uri: "/v1/messages/\(id)", method: .get, headers: Fixture.headers(bearer: credential, contentType: nil))
                #expect(response.status == status)
            }

            // The API key of another app cannot reach this app's users: its recipients are its own.
            let mailPost = try await client.execute(
                uri: "/v1/messages", method: .post, headers: Fixture.headers(bearer: fixture.mailKey),
                body: ByteBuffer(string: #"{"recipients":{"users":["alice"]}}"#))
            #expect(mailPost.status == .accepted)
            #expect(try await fixture.store.lastSequence(of: UserRef(appID: "chat", userID: "alice")) == 1)
            #expect(try await fixture.store.lastSequence(of: UserRef(appID: "mail", userID: "alice")) == 1)
        }
    }

    @Test func credentialsAreChecked() async throws {
        try await Fixture.with { fixture, client in
            let device = try await fixture.register(client, user: "alice", device: "phone")
            let body = ByteBuffer(string: #"{"recipients":{"users":["alice"]}}"#)
            for bearer in [nil, "bk_nope_nope", device, "not-a-key"] {
                let response = try await client.execute(
                    uri: "/v1/messages", method: .post, headers: Fixture.headers(bearer: bearer), body: body)
                #expect(response.status == .unauthorized)
                #expect(Fixture.error(response)?.code == "unauthorized")
                #expect(response.headers[.wwwAuthenticate]?.hasPrefix("Bearer") == true)
            }
            // A revoked key stops at once.
            let keys = try await fixture.store.apiKeys(appID: "chat")
            _ = try await fixture.store.revokeAPIKey(appID: "chat", keyID: keys[0].id)
            let revoked = try await client.execute(
                uri: "/v1/messages", method: .post, headers: Fixture.headers(bearer: fixture.chatKey), body: body)
            #expect(revoked.status == .unauthorized)
            // GET takes a device credential, not an API key.
            let withKey = try await client.execute(
                uri: "/v1/messages/x", method: .get, headers: Fixture.headers(bearer: fixture.mailKey, contentType: nil))
            #expect(withKey.status == .unauthorized)
        }
    }

    @Test func payloadLimit() async throws {
        try await Fixture.with(payloadBytes: 100, bodyBytes: 1000) { fixture, client in
            let big = String(repeating: "x", count: 200)
            let response = try await client.execute(
                uri: "/v1/messages", method: .post, headers: Fixture.headers(bearer: fixture.chatKey),
                body: ByteBuffer(string: #"{"recipients":{"users":["alice"]},"payload":"\#(big)"}"#))
            #expect(response.status == .contentTooLarge)
            #expect(Fixture.error(response)?.message.contains("limits.payload-bytes") == true)

            let huge = String(repeating: "x", count: 2000)
            let body = try await client.execute(
                uri: "/v1/messages", method: .post, headers: Fixture.headers(bearer: fixture.chatKey),
                body: ByteBuffer(string: #"{"recipients":{"users":["alice"]},"payload":"\#(huge)"}"#))
            #expect(body.status == .contentTooLarge)
            #expect(Fixture.error(body)?.message.contains("limits.body-bytes") == true)
        }
    }

    @Test func expiredMessagesAreNotServed() async throws {
        try await Fixture.with { fixture, client in
            let credential = try await fixture.register(client, user: "alice", device: "phone")
            let past = try await client.execute(
                uri: "/v1/messages", method: .post, headers: Fixture.headers(bearer: fixture.chatKey),
                body: ByteBuffer(string: #"{"recipients":{"users":["alice"]},"expiresAt":"2001-01-01T00:00:00Z"}"#))
            #expect(past.status == .badRequest)
            #expect(Fixture.error(past)?.message.hasPrefix("expiresAt") == true)
            let both = try await client.execute(
                uri: "/v1/messages", method: .post, headers: Fixture.headers(bearer: fixture.chatKey),
                body: ByteBuffer(string: #"{"recipients":{"users":["alice"]},"expiresAt":"2100-01-01T00:00:00Z","ttlSeconds":5}"#))
            #expect(both.status == .badRequest)
            #expect(Fixture.error(both)?.message.hasPrefix("ttlSeconds") == true)
            let missing = try await client.execute(
                uri: "/v1/messages/00000000-0000-0000-0000-000000000000", method: .get,
                headers: Fixture.headers(bearer: credential, contentType: nil))
            #expect(missing.status == .notFound)
        }
    }
}
