import BeckonJSON
@testable import BeckonServer
import BeckonStore
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Testing

/// Every route against every kind of credential a caller could present (none, garbage, the wrong
/// kind, another app's, another user's, revoked or replaced, expired), on a real listener: the
/// answer is the documented status and error code, and nothing of another user or app is shown.
@Suite struct AuthorizationMatrixTests {
    /// The credentials of the matrix, all made on one server.
    struct Credentials: Sendable {
        var admin = APITestFixture.adminToken
        var chatKey: String
        var mailKey: String
        var revokedKey: String
        /// Alice's and Bob's phones in `chat`; Carol's in `mail` carries the same device id as Alice's.
        var alice: String
        var bob: String
        var carol: String
        /// Alice's first credential, replaced when her phone registered again.
        var replacedDevice: String
        /// Dave's phone was deleted.
        var deletedDevice: String
        var aliceUserToken: String
        var mailUserToken: String
        var expiredUserToken: String
        var forgedUserToken: String
        var aliceMessage: String
    }

    /// One row: a request, the credential presented, and the answer it must get.
    struct Case: CustomStringConvertible, Sendable {
        var route: String
        var credential: String
        var method: HTTPRequest.Method
        var uri: String
        var body: String?
        var bearer: String?
        var status: HTTPResponse.Status
        var code: String?

        var description: String { "\(route) with \(credential) → \(status.code)" }
    }

    static func cases(_ c: Credentials) -> [Case] {
        let register = #"{"deviceId":"tablet","bundleId":"com.example.chat","environment":"production","tokens":{"remote":"ab12"}}"#
        let update = #"{"bundleId":"com.example.chat","environment":"production","tokens":{},"locale":"de-DE"}"#
        let post = #"{"recipients":{"users":["alice"]},"kind":"message","payload":{"text":"hi"}}"#
        let end = #"{"outcome":"declined"}"#
        var rows: [Case] = []
        func row(
            _ route: String, _ credential: String, _ method: HTTPRequest.Method, _ uri: String, _ body: String?,
            _ bearer: String?, _ status: HTTPResponse.Status, _ code: String? = nil
        ) {
            rows.append(Case(
                route: route, credential: credential, method: method, uri: uri, body: body, bearer: bearer,
                status: status, code: code ?? (status == .unauthorized ? "unauthorized" : status == .forbidden ? "forbidden" : status == .notFound ? "not_found" : nil)))
        }
        // Every route that needs a credential refuses a request without one, with garbage, and
        // with each kind of credential it does not take.
        let everyKind: [(String, String?)] = [
            ("none", nil), ("garbage", "not-a-credential"), ("API key", c.chatKey), ("device credential", c.alice),
            ("user token", c.aliceUserToken), ("admin token", c.admin), ("revoked API key", c.revokedKey),
            ("replaced device credential", c.replacedDevice), ("deleted device's credential", c.deletedDevice),
            ("expired user token", c.expiredUserToken), ("forged user token", c.forgedUserToken),
        ]
        let routes: [(name: String, method: HTTPRequest.Method, uri: String, body: String?, accepts: Set<String>)] = [
            ("POST /v1/devices", .post, "/v1/devices", register, ["user token"]),
            ("PUT /v1/devices/{id}", .put, "/v1/devices/phone-a", update, ["device credential"]),
            ("DELETE /v1/devices/{id}", .delete, "/v1/devices/phone-a", nil, ["device credential", "API key"]),
            ("POST /v1/messages", .post, "/v1/messages", post, ["API key"]),
            ("GET /v1/messages/{id}", .get, "/v1/messages/\(c.aliceMessage)", nil, ["device credential"]),
            ("POST /v1/calls/{id}/end", .post, "/v1/calls/\(c.aliceMessage)/end", end, ["API key"]),
            ("GET /v1/delivery/report", .get, "/v1/delivery/report", nil, ["API key"]),
            ("GET /v1/sync", .get, "/v1/sync", nil, ["device credential"]),
            ("POST /v1/admin/apps/{app}/keys", .post, "/v1/admin/apps/chat/keys", "{}", ["admin token"]),
            ("DELETE /v1/admin/apps/{app}/keys/{id}", .delete, "/v1/admin/apps/chat/keys/nokey", nil, ["admin token"]),
            ("GET /v1/admin/apps/{app}/users/{user}/devices", .get, "/v1/admin/apps/chat/users/alice/devices", nil, ["admin token"]),
            ("GET /v1/admin/apps/{app}/delivery/report", .get, "/v1/admin/apps/chat/delivery/report", nil, ["admin token"]),
            ("GET /status", .get, "/status", nil, ["admin token"]),
        ]
        for route in routes {
            for (kind, bearer) in everyKind where !route.accepts.contains(kind) {
                row(route.name, kind, route.method, route.uri, route.body, bearer, .unauthorized)
            }
        }

        // Another user's credential, or another app's, never reaches what is not theirs.
        row("PUT /v1/devices/{id}", "another user's device credential", .put, "/v1/devices/phone-a", update, c.bob, .forbidden)
        row("PUT /v1/devices/{id}", "another app's device credential", .put, "/v1/devices/phone-b", update, c.carol, .forbidden)
        row("DELETE /v1/devices/{id}", "another user's device credential", .delete, "/v1/devices/phone-a", nil, c.bob, .forbidden)
        row("DELETE /v1/devices/{id}", "another app's API key", .delete, "/v1/devices/phone-b", nil, c.mailKey, .notFound)
        row("GET /v1/messages/{id}", "another user's device credential", .get, "/v1/messages/\(c.aliceMessage)", nil, c.bob, .notFound)
        row("GET /v1/messages/{id}", "another app's device credential", .get, "/v1/messages/\(c.aliceMessage)", nil, c.carol, .notFound)
        row("POST /v1/calls/{id}/end", "another app's API key", .post, "/v1/calls/\(c.aliceMessage)/end", end, c.mailKey, .notFound)
        row("POST /v1/devices", "another app's user token", .post, "/v1/devices", register, c.mailUserToken, .badRequest, "invalid_field")
        row("POST /v1/admin/apps/{app}/keys", "wrong admin token", .post, "/v1/admin/apps/chat/keys", "{}", c.admin + "x", .unauthorized)
        row("DELETE /v1/admin/apps/{app}/keys/{id}", "wrong admin token", .delete, "/v1/admin/apps/chat/keys/nokey", nil, String(c.admin.dropLast()), .unauthorized)

        // And each route answers its own credential.
        row("PUT /v1/devices/{id}", "own device credential", .put, "/v1/devices/phone-b", update, c.bob, .ok)
        row("GET /v1/messages/{id}", "own device credential", .get, "/v1/messages/\(c.aliceMessage)", nil, c.alice, .ok)
        row("GET /v1/delivery/report", "API key", .get, "/v1/delivery/report", nil, c.chatKey, .ok)
        row("GET /v1/admin/apps/{app}/users/{user}/devices", "admin token", .get, "/v1/admin/apps/chat/users/alice/devices", nil, c.admin, .ok)
        row("GET /v1/admin/apps/{app}/users/{user}/devices", "admin token, no such app", .get, "/v1/admin/apps/nope/users/alice/devices", nil, c.admin, .notFound)
        row("GET /v1/admin/apps/{app}/delivery/report", "admin token", .get, "/v1/admin/apps/mail/delivery/report", nil, c.admin, .ok)
        row("GET /status", "admin token", .get, "/status", nil, c.admin, .ok)
        row("GET /v1/health", "none", .get, "/health", nil, nil, .ok)
        row("GET /metrics", "none", .get, "/metrics", nil, nil, .ok)
        return rows
    }

    @Test func everyRouteAnswersEveryKindOfCredentialAsDocumented() async throws {
        try await SyncTestServer.with { server in
            let c = try await Self.credentials(server)
            var checked = 0
            for row in Self.cases(c) {
                let response = try await server.http { client in
                    try await client.execute(TestClient.Request(
                        row.uri, method: row.method,
                        headers: APITestFixture.headers(bearer: row.bearer, contentType: row.body == nil ? nil : "application/json"),
                        body: row.body.map { ByteBuffer(string: $0) }))
                }
                #expect(response.status == row.status, "\(row): \(response.body.map { String(buffer: $0) } ?? "")")
                if let code = row.code {
                    let body = response.body.flatMap { try? JSONParser.parse(Array($0.readableBytesView)) }
                    #expect(body?["error"]?["code"]?.string == code, "\(row)")
                    #expect(body?["error"]?["message"]?.string?.isEmpty == false, "\(row)")
                }
                // No answer, not even an error, repeats a credential it was given.
                let text = response.body.map { String(buffer: $0) } ?? ""
                if let bearer = row.bearer, bearer.count > 8 { #expect(!text.contains(bearer), "\(row)") }
                checked += 1
            }
            #expect(checked > 100)
        }
    }

    /// The WebSocket upgrade itself, not only its HTTP answer: only a current device credential
    /// opens a session.
    @Test func onlyACurrentDeviceCredentialOpensASyncSession() async throws {
        try await SyncTestServer.with { server in
            let c = try await Self.credentials(server)
            for refused in [c.chatKey, c.revokedKey, c.replacedDevice, c.deletedDevice, c.aliceUserToken, c.admin] {
                let raw = try await SyncRawClient.open(port: server.port)
                let head = try await raw.upgrade(credential: refused)
                #expect(head.hasPrefix("HTTP/1.1 401"), "\(head.prefix(40))")
                try await raw.close()
            }
            let raw = try await SyncRawClient.open(port: server.port)
            #expect(try await raw.upgrade(credential: c.alice).hasPrefix("HTTP/1.1 101"))
            try await raw.close()
        }
    }

    /// A device reads its own user's mailbox and nothing else: Bob's session never carries a
    /// message posted to Alice, and Carol's phone in `mail` (same device id as Alice's) neither.
    @Test func aDeviceNeverReadsAnotherUsersMailbox() async throws {
        try await SyncTestServer.with { server in
            let c = try await Self.credentials(server)
            let bob = try await server.connect(c.bob)
            _ = try await bob.hello(cursor: 0)
            let alice = try await server.connect(c.alice)
            _ = try await alice.hello(cursor: 0)
            let forAlice = try await server.post(to: ["alice"], text: "for alice only")
            let forBob = try await server.post(to: ["bob"], text: "for bob")
            // Alice's session gets both of her messages (the one posted before the session too).
            let aliceFrames = [try await alice.next(), try await alice.next()]
            #expect(aliceFrames.allSatisfy { $0["type"]?.string == "message" })
            #expect(aliceFrames.map { $0["id"]?.string } == [c.aliceMessage, forAlice])
            // Bob's first frame is his own message: nothing of Alice's came before it.
            let bobFrame = try await bob.next()
            #expect(bobFrame["id"]?.string == forBob)
            try await bob.roundTrip()
            let carol = try await server.connect(c.carol)
            _ = try await carol.hello(cursor: 0)
            try await carol.roundTrip()
        }
    }

    static func credentials(_ server: SyncTestServer) async throws -> Credentials {
        let fixture = APITestFixture.self
        let now = Date()
        func userToken(app: String, user: String, expiresIn: TimeInterval = 300, secret: String? = nil) -> String {
            APITestFixture.signedUserToken(
                app: app, user: user, exp: now.addingTimeInterval(expiresIn),
                secret: secret ?? (app == "mail" ? fixture.mailSecret : fixture.chatSecret))
        }
        let store = server.store
        let replaced = try await server.device(user: "alice", device: "phone-a")
        let alice = try await store.issueDeviceCredential(DeviceRef(appID: "chat", deviceID: "phone-a"))
        let bob = try await server.device(user: "bob", device: "phone-b")
        let deleted = try await server.device(user: "dave", device: "phone-d")
        _ = try await store.deleteDevice(DeviceRef(appID: "chat", deviceID: "phone-d"))
        try await store.registerDevice(DeviceRegistration(
            appID: "mail", deviceID: "phone-a", userID: "carol", bundleID: "com.example.mail", environment: .production))
        let carol = try await store.issueDeviceCredential(DeviceRef(appID: "mail", deviceID: "phone-a"))
        let revoked = try await store.createAPIKey(appID: "chat", name: "revoked")
        _ = try await store.revokeAPIKey(appID: "chat", keyID: revoked.key.id)
        return Credentials(
            chatKey: server.chatKey, mailKey: try await store.createAPIKey(appID: "mail", name: "mail").secret,
            revokedKey: revoked.secret, alice: alice, bob: bob, carol: carol, replacedDevice: replaced,
            deletedDevice: deleted, aliceUserToken: userToken(app: "chat", user: "alice"),
            mailUserToken: userToken(app: "mail", user: "carol"),
            expiredUserToken: userToken(app: "chat", user: "alice", expiresIn: -600),
            forgedUserToken: userToken(app: "chat", user: "alice", secret: "not-the-apps-secret-0123456789abcdef"),
            aliceMessage: try await server.post(to: ["alice"], text: "before"))
    }
}

/// The operator's read-only admin routes: a user's devices, an app's delivery report.
@Suite struct AdminReadRoutesTests {
    @Test func aUsersDevicesAndTheReportAreShownToTheAdmin() async throws {
        try await SyncTestServer.with { server in
            _ = try await server.device(user: "alice", device: "phone")
            _ = try await server.device(user: "alice", device: "tablet")
            _ = try await server.device(user: "bob", device: "bobs")
            let devices = try await server.http { client in
                try await client.get("/v1/admin/apps/chat/users/alice/devices", headers: APITestFixture.headers(bearer: APITestFixture.adminToken))
            }
            #expect(devices.status == .ok)
            let listed = try JSONParser.parse(Array(try #require(devices.body).readableBytesView))
            guard case .array(let items)? = listed["devices"] else { throw FixtureError.unexpected("no devices: \(listed)") }
            #expect(Set(items.compactMap { $0["deviceId"]?.string }) == ["phone", "tablet"])
            #expect(items.allSatisfy { $0["userId"]?.string == "alice" })

            let report = try await server.http { client in
                try await client.get("/v1/admin/apps/chat/delivery/report?sinceSeconds=60", headers: APITestFixture.headers(bearer: APITestFixture.adminToken))
            }
            #expect(report.status == .ok)
            let body = try JSONParser.parse(Array(try #require(report.body).readableBytesView))
            #expect(body["appId"]?.string == "chat")
        }
    }
}
