import APNSCore
import APNSEmulator
import BeckonDelivery
import BeckonJSON
import BeckonNode
import BeckonProtocol
import BeckonServer
import BeckonStore
import Crypto
import DeviceSimulator
import Foundation
import Logging
import Prometheus
import ServiceLifecycle

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// A real Beckon node for a simulation: SQLite in a temporary directory, the built-in APNs
/// emulator, one app (`chat`) with the scenario's strategy and its delivery windows divided by
/// the time scale. The simulated phones talk to it as apps do: the HTTP API and the sync
/// WebSocket on loopback.
public final class SimulationServer: Sendable {
    public static let appID = "chat"
    public static let bundleID = "com.example.chat"
    static let userTokenSecret = "simulation-user-token-secret-0123456789abcdef"

    public let node: BeckonNode
    /// The built-in APNs emulator the node pushes to; its device side feeds the phones.
    public let emulator: APNSEmulator
    public let port: Int
    public let directory: URL
    let apiKey: String
    let store: any BeckonStore
    /// What stopping the node must also do to its store: close the SQLite file, or stop the
    /// PostgreSQL pool and drop the run's database.
    private let closeStore: @Sendable () async -> Void
    private let group: ServiceGroup
    private let running: Task<Void, any Error>

    private init(
        node: BeckonNode, emulator: APNSEmulator, port: Int, directory: URL, apiKey: String, store: any BeckonStore,
        closeStore: @escaping @Sendable () async -> Void, group: ServiceGroup, running: Task<Void, any Error>
    ) {
        self.closeStore = closeStore
        self.node = node
        self.emulator = emulator
        self.port = port
        self.directory = directory
        self.apiKey = apiKey
        self.store = store
        self.group = group
        self.running = running
    }

    /// Starts a node whose app uses `policy` (virtual seconds) at `timeScale`.
    public static func start(
        policy: DeliveryPolicy, timeScale: Double, logLevel: Logger.Level = .error
    ) async throws -> SimulationServer {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("beckon-simulate-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        // `BECKON_SIMULATE_POSTGRES_URL` runs the node on PostgreSQL, in a database of its own.
        let (store, closeStore) = try await openStore(directory: directory)
        var configuration = BeckonServerConfiguration.defaults
        configuration.http.port = 0
        configuration.http.host = "127.0.0.1"
        configuration.sync.pingInterval = nil
        var app = AppDeclaration(
            id: appID, bundleID: bundleID, teamID: "TEAM123456", environments: [.sandbox], userTokenSecret: userTokenSecret)
        app.delivery = policy.scaled(by: timeScale)
        configuration.apps = [app]
        try await BeckonAPI(store: store, configuration: configuration).declareApps()
        let apiKey = try await store.createAPIKey(appID: appID, name: "simulation").secret

        var logger = Logger(label: "beckon.simulate")
        logger.logLevel = logLevel
        let (ports, portContinuation) = AsyncStream.makeStream(of: Int.self)
        let node = try await BeckonNode.assemble(
            configuration: configuration, store: store, metrics: PrometheusCollectorRegistry(), logger: logger,
            tick: .milliseconds(10), onServerRunning: { portContinuation.yield($0) })
        let group = ServiceGroup(configuration: .init(services: [node], logger: logger))
        let running = Task { try await group.run() }
        var iterator = ports.makeAsyncIterator()
        guard let port = await iterator.next(), let emulator = node.emulator else {
            await group.triggerGracefulShutdown()
            throw SimulationError("the server did not start with its built-in APNs emulator")
        }
        return SimulationServer(
            node: node, emulator: emulator, port: port, directory: directory, apiKey: apiKey, store: store,
            closeStore: closeStore, group: group,
            running: running)
    }
    private static func openStore(directory: URL) async throws -> (any BeckonStore, @Sendable () async -> Void) {
        guard let url = ProcessInfo.processInfo.environment["BECKON_SIMULATE_POSTGRES_URL"] else {
            let store = try SQLiteStore(path: directory.appendingPathComponent("beckon.sqlite").path)
            return (store, { try? store.close() })
        }
        let name = "beckon_simulate_\(UUID().uuidString.prefix(8).lowercased())"
        var logger = Logger(label: "beckon.store")
        logger.logLevel = .error
        let admin = try PostgresStore(url: url, logger: logger)
        let adminPool = Task { await admin.run() }
        try await admin.execute(unsafeSQL: "CREATE DATABASE \(name)")
        var components = URLComponents(string: url)!
        components.path = "/" + name
        let store = try PostgresStore(url: components.string!, logger: logger)
        let pool = Task { await store.run() }
        try await store.migrate()
        return (store, {
            pool.cancel()
            _ = await pool.value
            try? await admin.execute(unsafeSQL: "DROP DATABASE \(name) WITH (FORCE)")
            adminPool.cancel()
        })
    }

    public var baseURL: URL { URL(string: "http://127.0.0.1:\(port)")! }
    public var syncURL: URL { URL(string: "ws://127.0.0.1:\(port)/v1/sync")! }

    /// Stops the node and removes its files.
    public func stop() async {
        await group.triggerGracefulShutdown()
        _ = try? await running.value
        await closeStore()
        try? FileManager.default.removeItem(at: directory)
    }

    // MARK: Phones

    /// A phone the node knows: its sync credential and its APNs tokens.
    struct RegisteredPhone: Sendable {
        var credential: String
        var tokens: [String]
    }

    /// Registers a phone as its app does: a token from APNs (the emulator), a VoIP token if the
    /// app has PushKit, then `POST /v1/devices`.
    func registerPhone(_ name: String, user: String, traits: AppTraits) async throws -> RegisteredPhone {
        let remote = APNSDeviceToken.random()
        let voip = traits.voip ? APNSDeviceToken.random() : nil
        try emulator.registerDevice(token: remote, bundleID: Self.bundleID, kind: .app, environment: .sandbox)
        if let voip { try emulator.registerDevice(token: voip, bundleID: Self.bundleID, kind: .voip, environment: .sandbox) }
        let credential = try await registerDevice(id: name, user: user, traits: traits, remoteToken: remote, voipToken: voip)
        return RegisteredPhone(credential: credential, tokens: [remote] + (voip.map { [$0] } ?? []))
    }

    /// A simulated phone talking to this node: its store in the node's directory, its network
    /// state told to APNs, its pushes routed to it.
    func makeDevice(
        _ name: String, phone: RegisteredPhone, traits: AppTraits, policy: IOSPolicy, seed: UInt64, timeline: Timeline,
        router: PushRouter, leaseTimingFactor: Double = 1
    ) -> SimulatedDevice {
        let emulator = self.emulator
        var configuration = DeviceConfiguration(
            name: name, traits: traits, policy: policy, seed: seed, syncURL: syncURL, baseURL: baseURL,
            credential: phone.credential, storePath: directory.appendingPathComponent("\(name).sqlite").path)
        configuration.leaseTimingFactor = leaseTimingFactor
        let device = SimulatedDevice(
            configuration: configuration,
            timeline: timeline,
            setAPNsOnline: { online in for token in phone.tokens { try? emulator.setDeviceOnline(token: token, online) } })
        router.add(device, tokens: phone.tokens)
        return device
    }

    // MARK: The API, as the app and its backend use it

    /// `POST /v1/devices` with a user token, as the app does at launch. Returns the credential.
    private func registerDevice(
        id: String, user: String, traits: AppTraits, remoteToken: String, voipToken: String?
    ) async throws -> String {
        var modes: Set<String> = []
        if traits.remoteNotificationMode { modes.insert("remote-notification") }
        if traits.voip { modes.insert("voip") }
        let capabilities = DeviceCapabilities(
            notificationServiceExtension: traits.serviceExtension, filtering: traits.filtering, backgroundModes: modes)
        var tokens: [String: JSONValue] = ["remote": .string(remoteToken)]
        if let voipToken { tokens["voip"] = .string(voipToken) }
        let body: JSONValue = [
            "deviceId": .string(id), "bundleId": .string(Self.bundleID), "environment": "sandbox", "tokens": .object(tokens),
            "capabilities": capabilities.json,
        ]
        let answer = try await request("POST", "/v1/devices", bearer: Self.userToken(user), body: body)
        guard answer.status == 201, let credential = answer.json?["credential"]?.stringValue else {
            throw SimulationError("registering \(id) answered \(answer.status): \(answer.text)")
        }
        return credential
    }

    /// `POST /v1/messages`, as the backend does. Returns the message id.
    func post(to users: [String], text: String, kind: MessageKind, urgency: MessageUrgency?) async throws -> String {
        var body: [String: JSONValue] = [
            "recipients": ["users": .array(users.map(JSONValue.string))], "kind": .string(kind.rawValue),
            "payload": ["text": .string(text)],
        ]
        if let urgency { body["urgency"] = .string(urgency.rawValue) }
        let answer = try await request("POST", "/v1/messages", bearer: apiKey, body: .object(body))
        guard answer.status == 202, let id = answer.json?["id"]?.stringValue else {
            throw SimulationError("posting answered \(answer.status): \(answer.text)")
        }
        return id
    }

    /// `POST /v1/calls/{id}/end`.
    func endCall(_ callID: String, outcome: CallEndOutcome) async throws {
        let answer = try await request(
            "POST", "/v1/calls/\(callID)/end", bearer: apiKey, body: ["outcome": .string(outcome.rawValue)])
        guard answer.status == 200 || answer.status == 202 else {
            throw SimulationError("ending call \(callID) answered \(answer.status): \(answer.text)")
        }
    }

    private func request(
        _ method: String, _ path: String, bearer: String, body: JSONValue
    ) async throws -> (status: Int, json: JSONValue?, text: String) {
        var request = URLRequest(url: baseURL.appendingPathComponent(path))
        request.httpMethod = method
        request.setValue("Bearer \(bearer)", forHTTPHeaderField: "Authorization")
        request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        request.httpBody = Data(body.bytes)
        let (data, response) = try await URLSession.shared.data(for: request)
        let status = (response as? HTTPURLResponse)?.statusCode ?? 0
        return (status, try? JSONParser.parse(Array(data)), String(decoding: data, as: UTF8.self))
    }

    /// The app's backend vouches for a user: an HS256 JWT with the app as audience.
    static func userToken(_ user: String) -> String {
        let header = Base64URL.encode(JSONValue.object(["alg": "HS256", "typ": "JWT"]).bytes)
        let claims = Base64URL.encode(
            JSONValue.object([
                "aud": .string(appID), "sub": .string(user), "exp": .int(Int(Date().timeIntervalSince1970) + 3600),
            ]).bytes)
        let signature = HMAC<SHA256>.authenticationCode(
            for: Data("\(header).\(claims)".utf8), using: SymmetricKey(data: Data(userTokenSecret.utf8)))
        return "\(header).\(claims).\(Base64URL.encode(signature))"
    }
}

/// The simulation could not run (as opposed to: it ran and an invariant failed).
public struct SimulationError: Error, CustomStringConvertible {
    public var description: String
    init(_ description: String) { self.description = description }
}

extension DeliveryPolicy {
    /// The policy with every window divided by `scale`: the server runs in wall-clock time, the
    /// phones in virtual time `scale` times faster (docs/simulator.md, "Scaled time").
    func scaled(by scale: Double) -> DeliveryPolicy {
        var policy = self
        policy.backgroundThrottleWindow /= scale
        policy.reconnectWindow /= scale
        policy.throttledAlertDelay = throttledAlertDelay.map { $0 / scale }
        policy.repushInitialDelay /= scale
        policy.callRingInterval /= scale
        policy.callTimeout /= scale
        policy.alertTimeToLive /= scale
        policy.backgroundTimeToLive /= scale
        policy.clearAllInterval /= scale
        return policy
    }
}

extension APNSDeviceToken {
    /// A fresh 32-byte token, as lowercase hex.
    static func random() -> String {
        (0..<32).map { _ in String(format: "%02x", UInt8.random(in: 0...255)) }.joined()
    }
}
