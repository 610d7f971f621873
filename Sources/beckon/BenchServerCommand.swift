import APNSCore
import ArgumentParser
import BeckonJSON
import Crypto
import Foundation
import NIOConcurrencyHelpers
import NIOCore
import NIOHTTP1
import NIOPosix

/// `beckon bench server`: load against a running `beckon serve` on loopback (see
/// `scripts/bench-server.sh`, `scripts/bench-cluster.py`). Sets itself up through the API: an app
/// key from the admin route, devices registered with HS256 user tokens signed with the app's secret.
///
/// - `accept`: concurrent posters over keep-alive HTTP/1.1 connections; durable messages
///   accepted per second (2xx only) and POST latency.
/// - `latency`: devices connected over WebSocket (hello, ack everything); messages posted at a
///   fixed rate to random connected users, each carrying its send time; post-to-frame latency.
/// - `idle`: idle sessions (hello, then nothing); the server's RSS growth per session.
/// - `pushes`: offline devices with push tokens, one message per request to a different device
///   each time, over `--connections` keep-alive connections; messages accepted per second and
///   pushes the APNs emulator accepted in the same window (`scripts/bench-pushes.py`).
///
/// Several nodes of one cluster: `--url` given once per node. `accept` spreads its posters
/// round-robin over the nodes; `latency` opens device k's session on node k mod N and posts each
/// message through a node other than its recipient's, so what is measured is the cross-node path
/// (commit, NOTIFY, the other node's mailbox read). `idle` uses the first node.
struct BenchServerCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "server",
        abstract: "Measure a running `beckon serve`: accepted messages/s, post-to-frame latency, idle sessions."
    )

    enum Mode: String, ExpressibleByArgument, CaseIterable, Sendable { case accept, latency, idle, pushes }

    @Option(help: "A node's base URL; loopback only. Repeat it for several nodes of one cluster.")
    var url: [String] = ["http://127.0.0.1:8080"]
    @Option(help: "accept | latency | idle | pushes") var mode: Mode
    @Option(name: .customLong("admin-token"), help: "The server's admin.token.") var adminToken: String
    @Option(help: "The app to post for (declared on the server).") var app: String = "chat"
    @Option(name: .customLong("bundle-id"), help: "The app's bundle id.") var bundleID: String = "com.example.chat"
    @Option(name: .customLong("user-token-secret"), help: "The app's user-token secret (HS256).") var userTokenSecret: String

    @Option(help: "accept: messages to post.") var count: Int = 50_000
    @Option(help: "accept: concurrent posters (one keep-alive connection each).") var concurrency: Int = 64
    @Option(help: "accept: users the messages are spread over.") var users: Int = 100
    @Option(help: "latency: connected devices (one user each); pushes: offline devices.") var devices: Int = 100
    @Option(help: "latency: messages per second.") var rate: Int = 1000
    @Option(help: "latency, pushes: seconds to post for.") var seconds: Int = 10
    @Option(help: "latency: posting connections.") var posters: Int = 32
    @Option(help: "idle: sessions to open.") var sessions: Int = 20_000
    @Option(help: "pushes: keep-alive posting connections, one round each on the same devices.")
    var connections: [Int] = [16, 64]
    @Option(name: .customLong("emulator-control"), help: "pushes: the APNs emulator's control URL (loopback).")
    var emulatorControl: String?
    @Option(name: .customLong("max-load"), help: "pushes: before each round, wait for a 1-minute load average below this (0: no wait).")
    var maxLoad: Double = 0
    @Option(name: .customLong("server-pid"), help: "idle: the server's PID, to read its VmRSS.") var serverPID: Int?
    @Option(name: .customLong("connect-concurrency"), help: "Sessions being opened at once.") var connectConcurrency: Int = 128
    @Option(help: "Event-loop threads of the client.") var threads: Int = System.coreCount

    func validate() throws {
        for url in url {
            guard let target = URL(string: url), target.scheme == "http", let host = target.host,
                ["127.0.0.1", "localhost", "::1", "[::1]"].contains(host)
            else { throw ValidationError("--url must be http://127.0.0.1:PORT (benchmarks stay on loopback)") }
        }
        if url.isEmpty { throw ValidationError("give at least one --url") }
        if mode == .pushes {
            guard let control = emulatorControl.flatMap(URL.init(string:)), control.scheme == "http",
                let host = control.host, ["127.0.0.1", "localhost", "::1", "[::1]"].contains(host)
            else { throw ValidationError("pushes: --emulator-control must be http://127.0.0.1:PORT") }
            if connections.isEmpty || connections.contains(where: { $0 < 1 }) {
                throw ValidationError("pushes: --connections must be positive")
            }
        }
        if count < 1 || concurrency < 1 || users < 1 || devices < 1 || rate < 1 || seconds < 1 || posters < 1
            || sessions < 1 || connectConcurrency < 1
        {
            throw ValidationError("counts, rates and concurrencies must be positive")
        }
    }

    func run() async throws {
        let endpoints = url.map { URL(string: $0)! }.map { BenchEndpoint(host: $0.host!, port: $0.port ?? 80) }
        let group = MultiThreadedEventLoopGroup(numberOfThreads: threads)
        let run = String(UInt32.random(in: 0...UInt32.max), radix: 16)
        let setup = BenchSetup(
            endpoints: endpoints, group: group, app: app, bundleID: bundleID, secret: userTokenSecret, run: run)
        let apiKey = try await setup.apiKey(adminToken: adminToken)
        print("server: \(url.joined(separator: " ")), mode: \(mode.rawValue), run: \(run), client threads: \(threads)")
        switch mode {
        case .accept: try await runAccept(setup: setup, apiKey: apiKey)
        case .latency: try await runLatency(setup: setup, apiKey: apiKey)
        case .idle: try await runIdle(setup: setup)
        case .pushes: try await runPushes(setup: setup, apiKey: apiKey)
        }
        // latency, idle: the sessions stay open until the process exits.
        if mode == .accept || mode == .pushes { try await group.shutdownGracefully() }
    }

    // MARK: accept

    private func runAccept(setup: BenchSetup, apiKey: String) async throws {
        // One device per user, as in production (the mailbox is per user either way).
        _ = try await setup.registerDevices((0..<users).map { ("u\($0)", "d\($0)") }, concurrency: concurrency)
        let userIDs = (0..<users).map { setup.user("u\($0)") }
        let workers = min(concurrency, count)
        let count = count
        let endpoints = setup.endpoints
        let group = setup.group
        let started = ContinuousClock.now
        let results = await withTaskGroup(of: PostStats.self) { tasks in
            for worker in 0..<workers {
                let share = count / workers + (worker < count % workers ? 1 : 0)
                tasks.addTask {
                    // Posters round-robin over the nodes: each node takes an equal share.
                    await BenchPoster.run(to: endpoints[worker % endpoints.count], on: group.next(), apiKey: apiKey) { sent in
                        guard sent < share else { return .done }
                        let index = worker + sent * workers
                        return .send(BenchPoster.message(
                            to: userIDs[index % userIDs.count], payload: #"{"text":"benchmark message","n":\#(index)}"#))
                    }
                }
            }
            var all = PostStats()
            for await stats in tasks { all.merge(stats) }
            return all
        }
        let elapsed = secondsOf(ContinuousClock.now - started)
        print("messages: \(count) to \(users) users, posters: \(workers) (one keep-alive HTTP/1.1 connection each)"
            + (endpoints.count > 1 ? ", round-robin over \(endpoints.count) nodes" : ""))
        print(String(format: "elapsed: %.3f s, accepted (2xx): %ld, throughput: %.0f durable messages/s", elapsed, results.accepted, Double(results.accepted) / elapsed))
        print("POST latency \(percentiles(results.latencies))")
        print("non-2xx answers: \(results.refused), failures without an answer: \(results.failed)")
    }

    // MARK: latency

    private func runLatency(setup: BenchSetup, apiKey: String) async throws {
        let credentials = try await setup.registerDevices((0..<devices).map { ("u\($0)", "d\($0)") }, concurrency: 32)
        let userIDs = (0..<devices).map { setup.user("u\($0)") }
        let origin = ContinuousClock.now
        let received = NIOLockedValueBox<(latencies: [Int64], count: Int)>(([], 0))
        let onMessage: BenchSessions.MessageHandler = { text in
            let now = nanoseconds(ContinuousClock.now - origin)
            // BeckonJSON rather than Foundation's decoder: the client's CPU is the node's loss.
            guard let frame = try? JSONParser.parse(text.utf8), frame["type"]?.stringValue == "message",
                let seq = frame["seq"]?.intValue
            else { return nil }
            if let sent = frame["payload"]?["t"]?.intValue.map(Int64.init) {
                received.withLockedValue {
                    $0.latencies.append(now - sent)
                    $0.count += 1
                }
            }
            return #"{"type":"ack","upTo":\#(seq)}"#
        }
        // Device k's session is on node k mod N.
        let endpoints = setup.endpoints
        let opened = try await BenchSessions.open(
            credentials: credentials, endpoints: endpoints, group: setup.group, concurrency: connectConcurrency,
            onMessage: onMessage)
        guard opened.count == devices else {
            throw BenchFailure("only \(opened.count) of \(devices) sessions opened: \(opened.firstError ?? "?")")
        }
        print("sessions: \(devices) connected (hello, acking every message)"
            + (endpoints.count > 1 ? ", device k on node k mod \(endpoints.count)" : ""))

        let total = rate * seconds
        let workers = min(posters, total)
        let rate = rate
        let group = setup.group
        // Poster w posts through node w mod N, to users whose sessions are on another node (with
        // one node, to anyone): every message takes the cross-node path.
        let recipientsOfNode = (0..<endpoints.count).map { node in
            endpoints.count == 1 ? userIDs : userIDs.indices.filter { $0 % endpoints.count != node }.map { userIDs[$0] }
        }
        guard recipientsOfNode.allSatisfy({ !$0.isEmpty }) else {
            throw BenchFailure("--devices must be at least 2 with several nodes")
        }
        let start = NIODeadline.now() + .milliseconds(100)
        let results = await withTaskGroup(of: PostStats.self) { tasks in
            for worker in 0..<workers {
                tasks.addTask {
                    let recipients = recipientsOfNode[worker % endpoints.count]
                    return await BenchPoster.run(to: endpoints[worker % endpoints.count], on: group.next(), apiKey: apiKey) { sent in
                        let index = worker + sent * workers
                        guard index < total else { return .done }
                        // Open loop: message k is due at start + k / rate, late or not.
                        let due = start + .nanoseconds(Int64(index) * 1_000_000_000 / Int64(rate))
                        if due > .now() { return .wait(until: due) }
                        let user = recipients[Int.random(in: 0..<recipients.count)]
                        return .send(BenchPoster.message(to: user, payload: #"{"t":\#(nanoseconds(ContinuousClock.now - origin))}"#))
                    }
                }
            }
            var all = PostStats()
            for await stats in tasks { all.merge(stats) }
            return all
        }
        let postingTime = Double((NIODeadline.now() - start).nanoseconds) / 1e9
        // Stragglers: every accepted message should arrive.
        let deadline = ContinuousClock.now + .seconds(10)
        while received.withLockedValue({ $0.count }) < results.accepted, ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(10))
        }
        let frames = received.withLockedValue { $0 }
        print("target: \(rate) messages/s for \(seconds) s to random users among \(devices), posting connections: \(workers)"
            + (endpoints.count > 1 ? ", each message posted to a node other than its recipient's session's" : ""))
        print(String(format: "posted: %ld in %.3f s, achieved rate: %.0f messages/s, accepted (2xx): %ld, non-2xx: %ld, failures: %ld",
            total, postingTime, Double(total) / postingTime, results.accepted, results.refused, results.failed))
        print("frames received: \(frames.count) of \(results.accepted) accepted")
        print("post-to-frame latency \(percentiles(frames.latencies))")
        print("POST latency \(percentiles(results.latencies))")
    }

    // MARK: idle

    private func runIdle(setup: BenchSetup) async throws {
        let started = ContinuousClock.now
        let credentials = try await setup.registerDevices((0..<sessions).map { ("u\($0)", "d\($0)") }, concurrency: 64)
        print(String(format: "registered %ld devices in %.1f s", sessions, secondsOf(ContinuousClock.now - started)))
        try await Task.sleep(for: .seconds(1))
        let before = serverPID.flatMap(residentKiB)
        let opening = ContinuousClock.now
        let opened = try await BenchSessions.open(
            credentials: credentials, endpoints: [setup.endpoint], group: setup.group, concurrency: connectConcurrency,
            onMessage: { _ in nil })
        let openTime = secondsOf(ContinuousClock.now - opening)
        try await Task.sleep(for: .seconds(3))  // Let the server settle.
        let after = serverPID.flatMap(residentKiB)
        let still = opened.alive()
        print(String(format: "sessions opened: %ld of %ld in %.1f s (%.0f/s), still open after 3 s: %ld", opened.count, sessions, openTime, Double(opened.count) / openTime, still))
        if let firstError = opened.firstError { print("first failure: \(firstError) (\(sessions - opened.count) failed)") }
        if let before, let after, opened.count > 0 {
            print(String(format: "server VmRSS: %ld KiB before, %ld KiB after; %.2f KiB per session", before, after, Double(after - before) / Double(opened.count)))
        } else {
            print("server VmRSS: not read (give --server-pid)")
        }
        if let mine = residentKiB(Int(getpid())) { print("client VmRSS: \(mine) KiB") }
    }
}

// MARK: - Support

struct BenchFailure: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

struct BenchEndpoint: Sendable {
    let host: String
    let port: Int
}

struct PostStats: Sendable {
    var latencies: [Int64] = []
    var accepted = 0
    var refused = 0
    var failed = 0

    mutating func merge(_ other: PostStats) {
        latencies += other.latencies
        accepted += other.accepted
        refused += other.refused
        failed += other.failed
    }
}

func nanoseconds(_ duration: Duration) -> Int64 {
    duration.components.seconds * 1_000_000_000 + duration.components.attoseconds / 1_000_000_000
}

func secondsOf(_ duration: Duration) -> Double {
    Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
}

func percentiles(_ values: [Int64]) -> String {
    let sorted = values.sorted()
    func at(_ p: Double) -> String {
        guard !sorted.isEmpty else { return "-" }
        let index = min(sorted.count - 1, max(0, Int((Double(sorted.count) * p).rounded(.up)) - 1))
        return String(format: "%.2f", Double(sorted[index]) / 1e6)
    }
    let maximum = sorted.last.map { String(format: "%.2f", Double($0) / 1e6) } ?? "-"
    return "p50: \(at(0.50)) ms, p99: \(at(0.99)) ms, p999: \(at(0.999)) ms, max: \(maximum) ms (\(sorted.count) samples)"
}

/// VmRSS of a process in KiB, from /proc (Linux).
private func residentKiB(_ pid: Int) -> Int? {
    guard let status = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8) else { return nil }
    for line in status.split(separator: "\n") where line.hasPrefix("VmRSS:") {
        return Int(line.split(separator: " ", omittingEmptySubsequences: true).dropFirst().first ?? "")
    }
    return nil
}

/// A keep-alive HTTP/1.1 connection, one request at a time.
struct BenchHTTPConnection {
    var inbound: NIOAsyncChannelInboundStream<HTTPClientResponsePart>.AsyncIterator
    let outbound: NIOAsyncChannelOutboundWriter<HTTPClientRequestPart>
    let hostHeader: String

    static func with<Result: Sendable>(
        _ endpoint: BenchEndpoint, group: any EventLoopGroup,
        _ body: (inout BenchHTTPConnection) async throws -> Result
    ) async throws -> Result {
        let channel = try await ClientBootstrap(group: group)
            .channelOption(.tcpOption(.tcp_nodelay), value: 1)
            .connect(host: endpoint.host, port: endpoint.port) { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHTTPClientHandlers()
                    return try NIOAsyncChannel<HTTPClientResponsePart, HTTPClientRequestPart>(
                        wrappingChannelSynchronously: channel)
                }
            }
        return try await channel.executeThenClose { inbound, outbound in
            var connection = BenchHTTPConnection(
                inbound: inbound.makeAsyncIterator(), outbound: outbound, hostHeader: "\(endpoint.host):\(endpoint.port)")
            return try await body(&connection)
        }
    }

    mutating func request(_ method: HTTPMethod, _ path: String, bearer: String?, body: String) async throws -> (Int, ByteBuffer) {
        var head = HTTPRequestHead(version: .http1_1, method: method, uri: path)
        let buffer = ByteBuffer(string: body)
        head.headers.add(name: "Host", value: hostHeader)
        head.headers.add(name: "Content-Type", value: "application/json")
        head.headers.add(name: "Content-Length", value: String(buffer.readableBytes))
        if let bearer { head.headers.add(name: "Authorization", value: "Bearer \(bearer)") }
        try await outbound.write(contentsOf: [.head(head), .body(.byteBuffer(buffer)), .end(nil)])
        var status = 0
        var answer = ByteBuffer()
        while let part = try await inbound.next() {
            switch part {
            case .head(let head): status = Int(head.status.code)
            case .body(var chunk): answer.writeBuffer(&chunk)
            case .end: return (status, answer)
            }
        }
        throw BenchFailure("the server closed the connection")
    }
}

/// Setup through the API: an app key, devices with user tokens.
struct BenchSetup: Sendable {
    /// The nodes; setup (keys, registrations) goes through the first, all share one database.
    let endpoints: [BenchEndpoint]
    var endpoint: BenchEndpoint { endpoints[0] }
    let group: any EventLoopGroup
    let app: String
    let bundleID: String
    let secret: String
    let run: String

    /// User and device ids are unique per run, so runs against one database do not collide.
    func user(_ name: String) -> String { "bench-\(run)-\(name)" }

    func apiKey(adminToken: String) async throws -> String {
        let (status, body) = try await BenchHTTPConnection.with(endpoint, group: group) { connection in
            try await connection.request(.POST, "/v1/admin/apps/\(app)/keys", bearer: adminToken, body: "{}")
        }
        struct Key: Decodable { let key: String }
        guard status == 201, let key = try? JSONValueDecoder().decode(Key.self, from: body.readableBytesView) else {
            throw BenchFailure("admin key: HTTP \(status) \(String(buffer: body))")
        }
        return key.key
    }

    func userToken(_ user: String) -> String {
        let header = Base64URL.encode(Data(#"{"alg":"HS256","typ":"JWT"}"#.utf8))
        let exp = Int(Date().timeIntervalSince1970) + 3600
        let claims = Base64URL.encode(Data(#"{"aud":"\#(app)","sub":"\#(user)","exp":\#(exp)}"#.utf8))
        let signature = HMAC<SHA256>.authenticationCode(
            for: Data("\(header).\(claims)".utf8), using: SymmetricKey(data: Data(secret.utf8)))
        return "\(header).\(claims).\(Base64URL.encode(Data(signature)))"
    }

    /// Registers (user, device) pairs; answers their credentials in the same order.
    /// With `tokens`, device k gets push token `tokens(k)` and may be woken in the background.
    func registerDevices(
        _ pairs: [(String, String)], concurrency: Int, tokens: (@Sendable (Int) -> String)? = nil
    ) async throws -> [String] {
        let workers = max(1, min(concurrency, pairs.count))
        let pairs = pairs.map { (user($0.0), user($0.1)) }
        let bundleID = bundleID
        return try await withThrowingTaskGroup(of: [(Int, String)].self) { tasks in
            for worker in 0..<workers {
                tasks.addTask {
                    try await BenchHTTPConnection.with(endpoint, group: group) { connection in
                        var credentials: [(Int, String)] = []
                        for index in stride(from: worker, to: pairs.count, by: workers) {
                            let (user, device) = pairs[index]
                            let token = tokens.map { #""remote":"\#($0(index))""# } ?? ""
                            let modes = tokens == nil ? "" : #","capabilities":{"backgroundModes":["remote-notification"]}"#
                            let body = #"{"deviceId":"\#(device)","bundleId":"\#(bundleID)","environment":"sandbox","tokens":{\#(token)}\#(modes)}"#
                            let (status, answer) = try await connection.request(.POST, "/v1/devices", bearer: userToken(user), body: body)
                            struct Registered: Decodable { let credential: String }
                            guard status == 201, let registered = try? JSONValueDecoder().decode(Registered.self, from: answer.readableBytesView)
                            else { throw BenchFailure("register \(device): HTTP \(status) \(String(buffer: answer))") }
                            credentials.append((index, registered.credential))
                        }
                        return credentials
                    }
                }
            }
            var all = [String](repeating: "", count: pairs.count)
            for try await batch in tasks { for (index, credential) in batch { all[index] = credential } }
            return all
        }
    }
}
