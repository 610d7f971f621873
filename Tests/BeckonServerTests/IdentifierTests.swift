@testable import BeckonServer
import BeckonStore
import Foundation
import Hummingbird
import HummingbirdTesting
import Testing

/// Ids callers choose, in the forms easy to mishandle: percent-encoded in a path, holding U+0000
/// (the store cuts the text there, so a message for `bob\u0000x` would reach Bob) or a newline
/// (a forged log line); and whole numbers written as `45.0`.
@Suite struct IdentifierTests {
    typealias Fixture = APITestFixture

    @Test func aPercentEncodedDeviceIdInThePathNamesTheDevice() async throws {
        try await Fixture.with { fixture, client in
            let credential = try await fixture.register(client, user: "alice", device: "a b/c")
            let update = #"{"bundleId":"com.example.chat","environment":"production","tokens":{}}"#
            let updated = try await client.execute(
                uri: "/v1/devices/a%20b%2Fc", method: .put, headers: Fixture.headers(bearer: credential), body: ByteBuffer(string: update))
            #expect(updated.status == .ok, "\(String(buffer: updated.body))")
            let deleted = try await client.execute(
                uri: "/v1/devices/a%20b%2Fc", method: .delete, headers: Fixture.headers(bearer: fixture.chatKey, contentType: nil))
            #expect(deleted.status == .noContent)
            #expect(try await fixture.store.device(DeviceRef(appID: "chat", deviceID: "a b/c")) == nil)
        }
    }

    @Test func idsWithControlCharactersAreRefusedNotCut() async throws {
        try await Fixture.with { fixture, client in
            for deviceID in ["phone\\u0000two", "phone\\nforged", "\\u0000"] {
                let body = #"{"deviceId":"\#(deviceID)","bundleId":"com.example.chat","environment":"production","tokens":{}}"#
                let response = try await client.execute(
                    uri: "/v1/devices", method: .post, headers: Fixture.headers(bearer: fixture.userToken(user: "alice")),
                    body: ByteBuffer(string: body))
                #expect(response.status == .badRequest, "\(deviceID)")
                #expect(Fixture.error(response)?.message.hasPrefix("deviceId") == true)
            }
            #expect(try await fixture.store.device(DeviceRef(appID: "chat", deviceID: "phone")) == nil)

            _ = try await fixture.register(client, user: "bob", device: "bobs-phone")
            let post = #"{"recipients":{"users":["bob\u0000x"]},"payload":{}}"#
            let posted = try await client.execute(
                uri: "/v1/messages", method: .post, headers: Fixture.headers(bearer: fixture.chatKey), body: ByteBuffer(string: post))
            #expect(posted.status == .badRequest)
            #expect(Fixture.error(posted)?.message.hasPrefix("recipients.users[0]") == true)

            // An escaped NUL in the token's JSON claims, which decodes to U+0000 in `sub`.
            let forged = fixture.userToken(user: "carol\\u0000x")
            let registered = try await client.execute(
                uri: "/v1/devices", method: .post, headers: Fixture.headers(bearer: forged),
                body: ByteBuffer(string: #"{"deviceId":"c","bundleId":"com.example.chat","environment":"production","tokens":{}}"#))
            #expect(registered.status == .unauthorized)
            #expect(Fixture.error(registered)?.message.contains("sub") == true)
        }
    }

    @Test func aWholeNumberWithAFractionPartOfZeroIsAnInteger() async throws {
        try await Fixture.with { fixture, client in
            _ = try await fixture.register(client, user: "alice", device: "phone")
            for (ttl, status) in [("45.0", HTTPResponse.Status.accepted), ("45", .accepted), ("45.5", .badRequest)] {
                let body = #"{"recipients":{"users":["alice"]},"payload":{},"ttlSeconds":\#(ttl)}"#
                let response = try await client.execute(
                    uri: "/v1/messages", method: .post, headers: Fixture.headers(bearer: fixture.chatKey), body: ByteBuffer(string: body))
                #expect(response.status == status, "ttlSeconds \(ttl)")
            }
        }
    }
}
