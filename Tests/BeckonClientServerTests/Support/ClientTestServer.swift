import BeckonClient
import BeckonClientTestSupport
import BeckonJSON
import BeckonNode
import BeckonProtocol
import BeckonServer
import BeckonStore
import Foundation
import Logging
import Prometheus
import ServiceLifecycle
import TestCapture
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A real Beckon node (HTTP API, sync gateway, delivery with the built-in APNs emulator) on a
/// loopback port over a fresh SQLite file, with the app `chat` and an API key: what the SDK
/// talks to in these tests.
struct ClientTestServer: Sendable {
    let store: SQLiteStore
    let node: BeckonNode
    let port: Int
    let chatKey: String

    static func with(
        configure: (inout BeckonServerConfiguration) -> Void = { _ in },
        _ body: @escaping @Sendable (ClientTestServer) async throws -> Void
    ) async throws {
        TestLogCapture.install()
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("beckon-client-e2e-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let store = try SQLiteStore(path: directory.appendingPathComponent("beckon.sqlite").path)
        var configuration = BeckonServerConfiguration.defaults
        configuration.http.port = 0
        configuration.http.host = "127.0.0.1"
        configuration.sync.pingInterval = nil
        configuration.apps = [
            AppDeclaration(
                id: "chat", bundleID: "com.example.chat", teamID: "TEAM123456",
                userTokenSecret: "chat-user-token-secret-0123456789abcdef"),
        ]
        configure(&configuration)
        try await BeckonAPI(store: store, configuration: configuration).declareApps()
        let chatKey = try await store.createAPIKey(appID: "chat", name: "test").secret

        var logger = Logger(label: "beckon.client.e2e")
        logger.logLevel = .warning
        let (ports, portContinuation) = AsyncStream.makeStream(of: Int.self)
        let node = try await BeckonNode.assemble(
            configuration: configuration, store: store, metrics: PrometheusCollectorRegistry(), logger: logger,
            tick: .milliseconds(20), onServerRunning: { portContinuation.yield($0) })
        let group = ServiceGroup(configuration: .init(services: [node], logger: logger))
        try await withThrowingTaskGroup(of: Void.self) { tasks in
            tasks.addTask { try await group.run() }
            var iterator = ports.makeAsyncIterator()
            guard let port = await iterator.next() else { throw TimedOut(what: "the server to start") }
            let server = ClientTestServer(store: store, node: node, port: port, chatKey: chatKey)
            do {
                try await body(server)
            } catch {
                await group.triggerGracefulShutdown()
                try? await tasks.waitForAll()
                try? store.close()
                throw error
            }
            await group.triggerGracefulShutdown()
            try await tasks.waitForAll()
        }
        try store.close()
    }

    var baseURL: URL { URL(string: "http://127.0.0.1:\(port)")! }

    func endpoint(_ credential: String) -> SyncEndpoint {
        SyncEndpoint(url: URL(string: "ws://127.0.0.1:\(port)/v1/sync")!, credential: credential, subprotocol: SyncProtocol.subprotocol)
    }

    /// Registers a device of `chat` in the store; returns its credential.
    func device(user: String, device: String) async throws -> String {
        try await store.registerDevice(DeviceRegistration(
            appID: "chat", deviceID: device, userID: user, bundleID: "com.example.chat", environment: .production))
        return try await store.issueDeviceCredential(DeviceRef(appID: "chat", deviceID: device))
    }

    /// `POST /v1/messages`, as the app's backend does; returns the message id.
    @discardableResult
    func post(
        to users: [String], text: String = "hi", kind: String = "message", notification: JSONValue? = nil
    ) async throws -> String {
        var body: [String: JSONValue] = [
            "recipients": ["users": .array(users.map(JSONValue.string))], "kind": .string(kind), "payload": ["text": .string(text)],
        ]
        if let notification { body["notification"] = notification }
        let answer = try await request("POST", "/v1/messages", bearer: chatKey, body: .object(body))
        guard answer.status == 202, let id = answer.json?["id"]?.stringValue else {
            throw TimedOut(what: "a 202 for the post (got \(answer.status))")
        }
        return id
    }

    func request(_ method: String, _ path: String, bearer: String, body: JSONValue? = nil) async throws -> (status: Int, json: JSONValue?) {
        var request = URLRequest(url: baseURL.appendingPathComponent(path))
        request.httpMethod = method
        request.setValue("Bearer \(bearer)", forHTTPHeaderField: "Authorization")
        if let body {
            request.setValue("application/json", forHTTPHeaderField: "Content-Type")
            request.httpBody = Data(body.bytes)
        }
        let (data, response) = try await URLSession.shared.data(for: request)
        let status = (response as? HTTPURLResponse)?.statusCode ?? 0
        ResponseCapture.record(
            method: method, uri: path, status: status,
            contentType: (response as? HTTPURLResponse)?.value(forHTTPHeaderField: "Content-Type"), body: Array(data))
        return (status, try? JSONParser.parse(Array(data)))
    }

    /// The highest sequence the server recorded as acknowledged by the device.
    func lastAck(_ device: String) async -> Int64? {
        await node.hub.presence(of: DeviceRef(appID: "chat", deviceID: device))?.lastAck
    }
}
