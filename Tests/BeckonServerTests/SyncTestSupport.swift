import BeckonJSON
@testable import BeckonServer
import BeckonNode
import BeckonStore
import Foundation
import Hummingbird
import HummingbirdTesting
import HummingbirdWSClient
import Logging
import Metrics
import NIOWebSocket
import Prometheus
import ServiceLifecycle
import TestCapture

/// A real `beckon serve` listener (HTTP API and sync gateway, `BeckonService`) on port 0 over a
/// fresh SQLite file, with the app `chat` and an API key for it.
struct SyncTestServer: Sendable {
    let store: SQLiteStore
    let hub: SyncHub
    let port: Int
    let chatKey: String
    let group: ServiceGroup
    /// The whole node (delivery and its in-process APNs emulator), when started (`delivery: true`).
    let node: BeckonNode?

    static func with(
        maxWindow: Int = 100, delivery withDelivery: Bool = false, metricsFactory: (any MetricsFactory)? = nil,
        hub givenHub: SyncHub? = nil, configure: (inout BeckonServerConfiguration) -> Void = { _ in },
        _ body: @escaping @Sendable (SyncTestServer) async throws -> Void
    ) async throws {
        TestLogCapture.install()
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("beckon-sync-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let store = try SQLiteStore(path: directory.appendingPathComponent("beckon.sqlite").path)
        var configuration = APITestFixture.configuration()
        configuration.http.port = 0
        configuration.sync.maximumWindow = maxWindow
        configuration.sync.pingInterval = nil
        configure(&configuration)
        try await BeckonAPI(store: store, configuration: configuration).declareApps()
        let chatKey = try await store.createAPIKey(appID: "chat", name: "test").secret

        let (ports, portContinuation) = AsyncStream.makeStream(of: Int.self)
        var logger = Logger(label: "beckon.sync.test")
        logger.logLevel = .warning
        // With delivery: the node `beckon serve` runs; without: the listener and hub alone.
        let node = withDelivery ? try await BeckonNode.assemble(
            configuration: configuration, store: store, metrics: PrometheusCollectorRegistry(), logger: logger,
            tick: .milliseconds(20), metricsFactory: metricsFactory,
            onServerRunning: { port in portContinuation.yield(port) }) : nil
        let hub = node?.hub ?? givenHub ?? SyncHub(metricsFactory: metricsFactory)
        let service: any Service
        if let node {
            service = node
        } else {
            service = try BeckonHTTPServer.application(
                configuration: configuration, store: store, metrics: PrometheusCollectorRegistry(), hub: hub,
                logger: logger, onServerRunning: { port in portContinuation.yield(port) })
        }
        let group = ServiceGroup(configuration: .init(services: [service], logger: logger))
        try await withThrowingTaskGroup(of: Void.self) { tasks in
            tasks.addTask { try await group.run() }
            var iterator = ports.makeAsyncIterator()
            guard let port = await iterator.next() else { throw FixtureError.unexpected("the server did not start") }
            let server = SyncTestServer(
                store: store, hub: hub, port: port, chatKey: chatKey, group: group, node: node)
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

    /// Registers a device of `chat` directly in the store and returns its credential.
    func device(user: String, device: String) async throws -> String {
        try await store.registerDevice(DeviceRegistration(
            appID: "chat", deviceID: device, userID: user, bundleID: "com.example.chat", environment: .production))
        return try await store.issueDeviceCredential(DeviceRef(appID: "chat", deviceID: device))
    }

    /// Posts a message through the HTTP API; returns its id.
    @discardableResult
    func post(to users: [String], text: String = "hi", kind: String = "message", key: String? = nil) async throws -> String {
        let recipients = users.map { "\"\($0)\"" }.joined(separator: ",")
        let body = #"{"recipients":{"users":[\#(recipients)]},"kind":"\#(kind)","payload":{"text":"\#(text)"}}"#
        let response = try await http { client in
            try await client.post(
                "/v1/messages", headers: APITestFixture.headers(bearer: key ?? chatKey), body: ByteBuffer(string: body))
        }
        guard response.status == .accepted, let buffer = response.body,
            let id = (try? JSONParser.parse(Array(buffer.readableBytesView)))?["id"]?.string
        else { throw FixtureError.unexpected("post: \(response.status)") }
        return id
    }

    func http(_ operation: @escaping @Sendable (RecordingLiveClient) async throws -> TestClient.Response) async throws
        -> TestClient.Response
    {
        try await TestClient.withClient(host: "127.0.0.1", port: port) { client in
            try await operation(RecordingLiveClient(base: client))
        }
    }

    func connect(_ credential: String?, subprotocol: Bool = true) async throws -> SyncTestClient {
        try await SyncTestClient.connect(port: port, credential: credential, subprotocol: subprotocol)
    }

    func presence(_ device: String) async -> SyncPresence? {
        await hub.presence(of: DeviceRef(appID: "chat", deviceID: device))
    }

    /// Waits (polling, with a timeout) until `condition` holds for the device's presence.
    func waitForPresence(
        _ device: String, timeout: Duration = .seconds(5), _ condition: @escaping @Sendable (SyncPresence) -> Bool
    ) async throws -> SyncPresence {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            if let presence = await presence(device), condition(presence) { return presence }
            try await Task.sleep(for: .milliseconds(5))
        }
        throw FixtureError.unexpected("presence of \(device) never matched: \(String(describing: await presence(device)))")
    }
}

/// A device's end of a sync session: a real WebSocket client whose frames are collected.
final class SyncTestClient: Sendable {
    private actor Inbox {
        var frames: [AnyJSON] = []
        var outbound: WebSocketOutboundWriter?
        var ended = false
        var failure: (any Error)?

        func push(_ frame: AnyJSON) { frames.append(frame) }
        func connected(_ writer: WebSocketOutboundWriter) { outbound = writer }
        func end(_ error: (any Error)? = nil) {
            ended = true
            failure = failure ?? error
        }
        func pop() -> AnyJSON? { frames.isEmpty ? nil : frames.removeFirst() }
    }

    private let task: Task<WebSocketCloseFrame?, any Error>
    private let inboxRef: Inbox

    private init(task: Task<WebSocketCloseFrame?, any Error>, inbox: Inbox) {
        self.task = task
        self.inboxRef = inbox
    }

    static func connect(port: Int, credential: String?, subprotocol: Bool) async throws -> SyncTestClient {
        let inbox = Inbox()
        var headers = HTTPFields()
        if let credential { headers[.authorization] = "Bearer \(credential)" }
        if subprotocol { headers[HTTPFields.Element.Name("Sec-WebSocket-Protocol")!] = "beckon.v2" }
        var logger = Logger(label: "beckon.sync.test.client")
        logger.logLevel = .warning
        let task = Task {
            do {
                let close = try await WebSocketClient.connect(
                    url: "ws://127.0.0.1:\(port)/v1/sync", configuration: .init(additionalHeaders: headers), logger: logger
                ) { inbound, outbound, _ in
                    await inbox.connected(outbound)
                    for try await message in inbound.messages(maxSize: 1 << 20) {
                        guard case .text(let text) = message,
                            let frame = try? JSONParser.parse(Array(text.utf8))
                        else { continue }
                        await inbox.push(frame)
                    }
                }
                await inbox.end()
                return close
            } catch {
                await inbox.end(error)
                throw error
            }
        }
        let client = SyncTestClient(task: task, inbox: inbox)
        // 30 s: with the whole suite on two cores a WebSocket connect has been seen to take more
        // than 5 s, several sessions at once (the upgrade's answer waiting for a loaded event loop).
        let deadline = ContinuousClock.now + .seconds(30)
        while ContinuousClock.now < deadline {
            if await inbox.outbound != nil { return client }
            if await inbox.ended { throw await inbox.failure ?? FixtureError.unexpected("connection ended") }
            try await Task.sleep(for: .milliseconds(2))
        }
        throw FixtureError.unexpected("connect timed out")
    }

    func send(_ text: String) async throws {
        guard let outbound = await inboxRef.outbound else { throw FixtureError.unexpected("not connected") }
        try await outbound.write(.text(text))
    }

    func hello(cursor: Int64 = 0, window: Int? = nil, role: String? = nil) async throws -> AnyJSON {
        let window = window.map { #","window":\#($0)"# } ?? ""
        let role = role.map { #","role":"\#($0)""# } ?? ""
        try await send(#"{"type":"hello","version":2,"cursor":\#(cursor)\#(window)\#(role)}"#)
        let welcome = try await next()
        guard welcome["type"]?.string == "welcome" else { throw FixtureError.unexpected("expected welcome: \(welcome)") }
        return welcome
    }

    /// The next frame, waiting at most `timeout` for it.
    func next(timeout: Duration = .seconds(5)) async throws -> AnyJSON {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            if let frame = await inboxRef.pop() { return frame }
            if await inboxRef.ended { throw FixtureError.unexpected("the connection ended") }
            try await Task.sleep(for: .milliseconds(2))
        }
        throw FixtureError.unexpected("no frame within \(timeout)")
    }

    /// The next `count` frames, which must be `message` frames; their `seq`s.
    func messages(_ count: Int) async throws -> [Int64] {
        var sequences: [Int64] = []
        for _ in 0..<count {
            let frame = try await next()
            guard frame["type"]?.string == "message", let seq = frame["seq"]?.number else {
                throw FixtureError.unexpected("expected a message: \(frame)")
            }
            sequences.append(Int64(seq))
        }
        return sequences
    }

    /// A ping round trip: every frame the server meant to send before it has arrived by then.
    func roundTrip(_ id: String = "sync") async throws {
        try await send(#"{"type":"ping","id":"\#(id)"}"#)
        let pong = try await next()
        guard pong["type"]?.string == "pong", pong["id"]?.string == id else {
            throw FixtureError.unexpected("expected pong \(id): \(pong)")
        }
    }

    /// Closes from the client's side with a close frame (no `bye`).
    func closeWithoutBye() async throws {
        guard let outbound = await inboxRef.outbound else { return }
        try await outbound.close(.normalClosure, reason: nil)
    }

    /// The close code the server sent, once the connection has ended.
    func closeCode() async throws -> Int? {
        guard let frame = try await task.value else { return nil }
        return Int(WebSocketErrorCode.codeNumber(frame.closeCode))
    }
}

extension WebSocketErrorCode {
    static func codeNumber(_ code: WebSocketErrorCode) -> UInt16 {
        switch code {
        case .normalClosure: 1000
        case .goingAway: 1001
        case .protocolError: 1002
        case .unacceptableData: 1003
        case .dataInconsistentWithMessage: 1007
        case .policyViolation: 1008
        case .messageTooLarge: 1009
        case .missingExtension: 1010
        case .unexpectedServerError: 1011
        case .unknown(let code): code
        }
    }
}
