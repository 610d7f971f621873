@testable import BeckonServer
import BeckonStore
import Foundation
import Hummingbird
import HummingbirdTesting
import Testing

/// Every failure answers `{"error": {"code", "message"}}` with the right status.
@Suite struct ErrorsAPITests {
    typealias Fixture = APITestFixture

    @Test func malformedJSONIs400() async throws {
        try await Fixture.with { fixture, client in
            for body in [#"{"recipients":"#, "not json", #"{"recipients":{"users":["a"]}} trailing"#, ""] {
                let response = try await client.execute(
                    uri: "/v1/messages", method: .post, headers: Fixture.headers(bearer: fixture.chatKey),
                    body: ByteBuffer(string: body))
                #expect(response.status == .badRequest, "\(body)")
                #expect(Fixture.error(response)?.code == "malformed_json", "\(body)")
            }
        }
    }

    @Test func unknownFieldsAre400NamingTheField() async throws {
        try await Fixture.with { fixture, client in
            let cases = [
                (#"{"recipients":{"users":["a"]},"priority":10}"#, "priority: unknown field"),
                (#"{"recipients":{"users":["a"],"groups":["g"]}}"#, "recipients.groups: unknown field"),
                (#"{"recipients":{"users":["a"]},"notification":{"titel":"x"}}"#, "notification.titel: unknown field"),
            ]
            for (body, message) in cases {
                let response = try await client.execute(
                    uri: "/v1/messages", method: .post, headers: Fixture.headers(bearer: fixture.chatKey),
                    body: ByteBuffer(string: body))
                #expect(response.status == .badRequest)
                #expect(Fixture.error(response)?.code == "unknown_field")
                #expect(Fixture.error(response)?.message == message)
            }
        }
    }

    @Test func wrongTypesAre400NamingTheField() async throws {
        try await Fixture.with { fixture, client in
            let cases = [
                (#"[]"#, "body:"),
                (#"{}"#, "recipients:"),
                (#"{"recipients":{"users":["a", 3]}}"#, "recipients.users[1]:"),
                (#"{"recipients":{"users":["a"]},"kind":"sms"}"#, "kind:"),
                (#"{"recipients":{"users":["a"]},"ttlSeconds":"10"}"#, "ttlSeconds:"),
                (#"{"recipients":{"users":["a"]},"notification":{"locArgs":"x"}}"#, "notification.locArgs:"),
            ]
            for (body, prefix) in cases {
                let response = try await client.execute(
                    uri: "/v1/messages", method: .post, headers: Fixture.headers(bearer: fixture.chatKey),
                    body: ByteBuffer(string: body))
                #expect(response.status == .badRequest, "\(body)")
                #expect(Fixture.error(response)?.message.hasPrefix(prefix) == true, "\(body)")
            }
        }
    }

    @Test func nonJSONIs415() async throws {
        try await Fixture.with { fixture, client in
            for contentType in [nil, "text/plain", "application/x-www-form-urlencoded"] {
                let response = try await client.execute(
                    uri: "/v1/messages", method: .post, headers: Fixture.headers(bearer: fixture.chatKey, contentType: contentType),
                    body: ByteBuffer(string: #"{"recipients":{"users":["a"]}}"#))
                #expect(response.status == .unsupportedMediaType)
                #expect(Fixture.error(response)?.code == "unsupported_media_type")
            }
            let withCharset = try await client.execute(
                uri: "/v1/messages", method: .post,
                headers: Fixture.headers(bearer: fixture.chatKey, contentType: "application/json; charset=utf-8"),
                body: ByteBuffer(string: #"{"recipients":{"users":["a"]}}"#))
            #expect(withCharset.status == .accepted)
        }
    }

    @Test func unknownRoutesAnswerTheErrorShape() async throws {
        try await Fixture.with { _, client in
            let response = try await client.execute(uri: "/v1/nope", method: .get)
            #expect(response.status == .notFound)
            #expect(Fixture.error(response)?.code == "not_found")
        }
    }

    @Test func adminIssuesAndRevokesKeys() async throws {
        try await Fixture.with { fixture, client in
            let denied = try await client.execute(
                uri: "/v1/admin/apps/chat/keys", method: .post, headers: Fixture.headers(bearer: "wrong", contentType: nil))
            #expect(denied.status == .unauthorized)
            let unknownApp = try await client.execute(
                uri: "/v1/admin/apps/nope/keys", method: .post,
                headers: Fixture.headers(bearer: Fixture.adminToken, contentType: nil))
            #expect(unknownApp.status == .notFound)

            let created = try await client.execute(
                uri: "/v1/admin/apps/chat/keys", method: .post, headers: Fixture.headers(bearer: Fixture.adminToken),
                body: ByteBuffer(string: #"{"name":"backend-1"}"#))
            #expect(created.status == .created)
            let json = try #require(Fixture.json(created))
            let key = try #require(json["key"]?.string)
            let id = try #require(json["id"]?.string)
            #expect(json["name"]?.string == "backend-1")
            let posted = try await client.execute(
                uri: "/v1/messages", method: .post, headers: Fixture.headers(bearer: key),
                body: ByteBuffer(string: #"{"recipients":{"users":["a"]}}"#))
            #expect(posted.status == .accepted)

            let revoked = try await client.execute(
                uri: "/v1/admin/apps/chat/keys/\(id)", method: .delete,
                headers: Fixture.headers(bearer: Fixture.adminToken, contentType: nil))
            #expect(revoked.status == .noContent)
            let after = try await client.execute(
                uri: "/v1/messages", method: .post, headers: Fixture.headers(bearer: key),
                body: ByteBuffer(string: #"{"recipients":{"users":["a"]}}"#))
            #expect(after.status == .unauthorized)
        }
    }

    @Test func overTheRateLimitsIs429WithRetryAfterAndNothingStored() async throws {
        try await Fixture.with(configure: {
            $0.limits.messagesPerSecond = 2
            $0.limits.registrationsPerMinute = 1
        }) { fixture, client in
            let message = #"{"recipients":{"users":["alice"]},"kind":"message","payload":{}}"#
            var statuses: [HTTPResponse.Status] = []
            var limited: TestResponse?
            for _ in 0..<3 {
                let response = try await client.execute(
                    uri: "/v1/messages", method: .post, headers: Fixture.headers(bearer: fixture.chatKey),
                    body: ByteBuffer(string: message))
                statuses.append(response.status)
                if response.status == .tooManyRequests { limited = response }
            }
            #expect(statuses == [.accepted, .accepted, .tooManyRequests])
            let refusal = try #require(limited)
            #expect(Fixture.error(refusal)?.code == "rate_limited")
            #expect(Fixture.error(refusal)?.message.contains("limits.messages-per-second") == true)
            #expect(refusal.headers[.retryAfter] == "1")
            #expect(try await fixture.store.lastSequence(of: UserRef(appID: "chat", userID: "alice")) == 2)
            // The limit is per app: the other app's key still posts.
            let mail = try await client.execute(
                uri: "/v1/messages", method: .post, headers: Fixture.headers(bearer: fixture.mailKey),
                body: ByteBuffer(string: message))
            #expect(mail.status == .accepted)

            _ = try await fixture.register(client, user: "alice", device: "phone-1")
            await #expect(throws: FixtureError.self) { try await fixture.register(client, user: "alice", device: "phone-2") }
            let second = try await client.execute(
                uri: "/v1/devices", method: .post, headers: Fixture.headers(bearer: fixture.userToken(user: "alice")),
                body: ByteBuffer(string: #"{"deviceId":"phone-3","tokens":{}}"#))
            #expect(second.status == .tooManyRequests)
            #expect(second.headers[.retryAfter] == "60")
            #expect(try await fixture.store.device(DeviceRef(appID: "chat", deviceID: "phone-2")) == nil)
            _ = try await fixture.register(client, user: "bob", device: "phone-4")
        }
    }
}
