import BeckonJSON
@testable import BeckonServer
import BeckonStore
import Crypto
import Foundation
import Hummingbird
import HummingbirdTesting
import Prometheus
import TestCapture

/// A server on a fresh SQLite file with two apps, `chat` and `mail`, and an API key for each.
struct APITestFixture: Sendable {
    static let chatSecret = "chat-user-token-secret-0123456789abcdef"
    static let mailSecret = "mail-user-token-secret-0123456789abcdef"
    static let adminToken = "admin-token-0123456789abcdef-0123456789"

    let store: SQLiteStore
    let api: BeckonAPI
    let now: Date
    let chatKey: String
    let mailKey: String

    static func configuration(payloadBytes: Int = 64 * 1024, bodyBytes: Int = 256 * 1024) -> BeckonServerConfiguration {
        var configuration = BeckonServerConfiguration.defaults
        configuration.limits.payloadBytes = payloadBytes
        configuration.limits.bodyBytes = bodyBytes
        configuration.apps = [
            AppDeclaration(id: "chat", bundleID: "com.example.chat", teamID: "TEAM123456", userTokenSecret: chatSecret),
            AppDeclaration(
                id: "mail", bundleID: "com.example.mail", teamID: "TEAM654321", environments: [.production],
                userTokenSecret: mailSecret),
        ]
        configuration.adminToken = adminToken
        return configuration
    }

    /// Runs `body` against a fresh fixture and removes the database afterwards.
    static func with(
        payloadBytes: Int = 64 * 1024, bodyBytes: Int = 256 * 1024,
        configure: (inout BeckonServerConfiguration) -> Void = { _ in },
        _ body: @escaping @Sendable (APITestFixture, any TestClientProtocol) async throws -> Void
    ) async throws {
        TestLogCapture.install()
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("beckon-api-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let store = try SQLiteStore(path: directory.appendingPathComponent("beckon.sqlite").path)
        let now = Date()
        var configuration = configuration(payloadBytes: payloadBytes, bodyBytes: bodyBytes)
        configure(&configuration)
        let api = BeckonAPI(store: store, configuration: configuration, now: { now })
        try await api.declareApps()
        let fixture = APITestFixture(
            store: store, api: api, now: now,
            chatKey: try await store.createAPIKey(appID: "chat", name: "test").secret,
            mailKey: try await store.createAPIKey(appID: "mail", name: "test").secret)
        let app = Application(router: BeckonHTTPServer.router(api: api, metrics: PrometheusCollectorRegistry()))
        do {
            try await app.test(.router) { client in try await body(fixture, RecordingTestClient(base: client)) }
        } catch {
            try? store.close()
            throw error
        }
        try store.close()
    }

    /// A user token as an app's backend would sign it (HS256 JWT).
    func userToken(
        app: String = "chat", user: String, expiresIn: TimeInterval = 300, secret: String? = nil,
        alg: String = "HS256"
    ) -> String {
        Self.signedUserToken(
            app: app, user: user, exp: now.addingTimeInterval(expiresIn),
            secret: secret ?? (app == "mail" ? Self.mailSecret : Self.chatSecret), alg: alg)
    }

    /// A user token signed with `secret`, expiring at `exp`.
    static func signedUserToken(app: String, user: String, exp expiry: Date, secret key: String, alg: String = "HS256") -> String {
        let header = Self.base64URL(Data(#"{"alg":"\#(alg)","typ":"JWT"}"#.utf8))
        let exp = Int(expiry.timeIntervalSince1970)
        let claims = Self.base64URL(Data(#"{"aud":"\#(app)","sub":"\#(user)","exp":\#(exp)}"#.utf8))
        let signature = HMAC<SHA256>.authenticationCode(
            for: Data("\(header).\(claims)".utf8), using: SymmetricKey(data: Data(key.utf8)))
        return "\(header).\(claims).\(Self.base64URL(Data(signature)))"
    }

    static func base64URL(_ data: Data) -> String {
        data.base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }

    /// Registers a device for `user` and returns its credential.
    func register(
        _ client: some TestClientProtocol, app: String = "chat", user: String, device: String,
        token: String = "aabbccdd00112233"
    ) async throws -> String {
        let bundle = app == "mail" ? "com.example.mail" : "com.example.chat"
        let body = #"{"deviceId":"\#(device)","bundleId":"\#(bundle)","environment":"production","tokens":{"remote":"\#(token)"}}"#
        let response = try await client.execute(
            uri: "/v1/devices", method: .post, headers: Self.headers(bearer: userToken(app: app, user: user)),
            body: ByteBuffer(string: body))
        guard response.status == .created, case .object(let json)? = Self.json(response),
            case .string(let credential)? = json["credential"]
        else { throw FixtureError.unexpected("register: \(response.status) \(String(buffer: response.body))") }
        return credential
    }

    static func headers(bearer: String? = nil, contentType: String? = "application/json", extra: HTTPFields = [:]) -> HTTPFields {
        var headers = extra
        if let bearer { headers[.authorization] = "Bearer \(bearer)" }
        if let contentType { headers[.contentType] = contentType }
        return headers
    }

    /// The response body as loosely typed JSON.
    static func json(_ response: TestResponse) -> AnyJSON? {
        try? JSONParser.parse(Array(response.body.readableBytesView))
    }

    /// `(code, message)` of an error answer.
    static func error(_ response: TestResponse) -> (code: String, message: String)? {
        guard case .object(let root)? = json(response), case .object(let error)? = root["error"],
            case .string(let code)? = error["code"], case .string(let message)? = error["message"]
        else { return nil }
        return (code, message)
    }
}

enum FixtureError: Error {
    case unexpected(String)
}

/// Answers are read with the server's own JSON value type, plus a few accessors for tests.
typealias AnyJSON = JSONValue

extension JSONValue {
    subscript(index: Int) -> JSONValue? {
        if case .array(let array) = self, array.indices.contains(index) { array[index] } else { nil }
    }

    var string: String? { if case .string(let s) = self { s } else { nil } }
    var number: Double? {
        switch self {
        case .int(let n): Double(n)
        case .double(let n): n
        default: nil
        }
    }
}
