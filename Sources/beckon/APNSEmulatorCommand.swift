import APNSCore
import APNSEmulator
import ArgumentParser
import Foundation
import Logging

// Owned by the emulator work: `beckon apns-emulator`.
struct APNSEmulatorCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "apns-emulator",
        abstract: "Run the APNs emulator: an APNs-compatible HTTP/2 server for tests and benchmarks."
    )

    @Option(name: .long, help: "Address to listen on, HOST:PORT (port 0 = any free port).")
    var listen: String = "127.0.0.1:2197"

    @Option(name: .customLong("tls-cert"), help: "Server certificate chain (PEM). Without it a CA and certificate are generated.")
    var tlsCert: String?

    @Option(name: .customLong("tls-key"), help: "Server private key (PEM), with --tls-cert.")
    var tlsKey: String?

    @Option(
        name: .customLong("client-ca"),
        help: "PEM file of a CA whose client certificates may connect (certificate-based authentication; the subject's UID is the bundle id). Repeatable."
    )
    var clientCAs: [String] = []

    @Option(name: .long, help: "sandbox or production.")
    var environment: String = "sandbox"

    @Option(name: .customLong("auth-key"), help: "KEYID:TEAMID:PEMFILE of a provider key (the .p8 or its public key). Repeatable.")
    var authKeys: [String] = []

    @Option(name: .customLong("topic"), help: "A bundle id the team may push to. Repeatable; none = any.")
    var topics: [String] = []

    @Flag(name: .customLong("auto-register"), help: "Unknown well-formed device tokens become devices on first use.")
    var autoRegister = false

    @Option(name: .customLong("max-streams"), help: "MAX_CONCURRENT_STREAMS after the first valid token.")
    var maxStreams: Int = 1000

    @Option(name: .customLong("initial-streams"), help: "MAX_CONCURRENT_STREAMS before the first valid token (Apple: 1).")
    var initialStreams: Int = 1

    @Option(name: .long, help: "HOST:PORT of the HTTP/JSON control API (port 0 = any free port). Off without it.")
    var control: String?

    @Option(
        name: .customLong("error-budget"),
        help: "ERRORS[:BADTOKENS]: close a connection with GOAWAY after this many 4xx answers other than 410 (or this many BadDeviceToken). Off by default."
    )
    var errorBudget: String?

    @Option(
        name: .customLong("log-limit"),
        help: "Notifications each device's received and displayed logs keep, the newest (default \(APNSEmulatorConfiguration().deliveryLogLimit))."
    )
    var logLimit: Int?

    @Option(name: .long, help: "Event-loop threads (default: one per core).")
    var threads: Int?

    @Option(name: .customLong("state-dir"), help: "Directory for the generated CA certificate (ca.pem).")
    var stateDir: String?

    func validate() throws {
        guard APNSEnvironment(rawValue: environment) != nil else {
            throw ValidationError("--environment must be sandbox or production")
        }
        guard (tlsCert == nil) == (tlsKey == nil) else { throw ValidationError("--tls-cert and --tls-key go together") }
        _ = try Self.hostPort(listen)
        if let control { _ = try Self.hostPort(control) }
        if let errorBudget { _ = try Self.budget(errorBudget) }
        if let threads, threads < 1 { throw ValidationError("--threads must be at least 1") }
        if let logLimit, logLimit < 1 { throw ValidationError("--log-limit must be at least 1") }
    }

    static func budget(_ text: String) throws -> APNSEmulatorErrorBudget {
        let parts = text.split(separator: ":", omittingEmptySubsequences: false).map { Int($0) }
        guard (1...2).contains(parts.count), parts.allSatisfy({ ($0 ?? 0) > 0 }) else {
            throw ValidationError("--error-budget is ERRORS or ERRORS:BADTOKENS (positive integers), got \(text)")
        }
        return APNSEmulatorErrorBudget(errors: parts[0], badDeviceTokenErrors: parts.count == 2 ? parts[1] : nil)
    }

    static func hostPort(_ text: String) throws -> (String, Int) {
        guard let colon = text.lastIndex(of: ":"), let port = Int(text[text.index(after: colon)...]), (0...65535).contains(port)
        else { throw ValidationError("expected HOST:PORT, got \(text)") }
        return (String(text[..<colon]), port)
    }

    func run() async throws {
        LoggingSystem.bootstrap { StreamLogHandler(label: $0, stream: OutputSink.standardOutput) }
        var configuration = APNSEmulatorConfiguration()
        (configuration.host, configuration.port) = try Self.hostPort(listen)
        configuration.environment = APNSEnvironment(rawValue: environment)!
        configuration.bundleIDs = topics
        configuration.autoRegister = autoRegister
        configuration.maxConcurrentStreams = maxStreams
        configuration.initialStreamsBeforeAuthentication = initialStreams
        configuration.errorBudget = try errorBudget.map(Self.budget)
        configuration.threads = threads
        if let logLimit { configuration.deliveryLogLimit = logLimit }
        configuration.trustedClientCAPEMs = try clientCAs.map { try String(contentsOfFile: $0, encoding: .utf8) }
        for spec in authKeys {
            let parts = spec.split(separator: ":", maxSplits: 2).map(String.init)
            guard parts.count == 3 else { throw ValidationError("--auth-key is KEYID:TEAMID:PEMFILE, got \(spec)") }
            let pem = try String(contentsOfFile: parts[2], encoding: .utf8)
            configuration.authKeys.append(try APNSEmulatorAuthKey(keyID: parts[0], teamID: parts[1], pem: pem))
        }
        var caPath: String?
        if let tlsCert, let tlsKey {
            configuration.tls = .files(certificateChainPath: tlsCert, privateKeyPath: tlsKey)
        } else {
            let directory = stateDir ?? FileManager.default.temporaryDirectory.appendingPathComponent("beckon-apns-emulator").path
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
            caPath = (directory as NSString).appendingPathComponent("ca.pem")
            configuration.caCertificateOutputPath = caPath
        }
        if configuration.authKeys.isEmpty && configuration.trustedClientCAPEMs.isEmpty {
            say("warning: no --auth-key given; every token request will get InvalidProviderToken")
        }

        let emulator = try APNSEmulator(configuration: configuration)
        try await emulator.start()
        say("APNs emulator (\(configuration.environment.rawValue)) listening on \(configuration.host):\(emulator.port)")
        if let caPath { say("CA certificate: \(caPath)") }
        if let control {
            let (host, port) = try Self.hostPort(control)
            let server = try await emulator.startControl(host: host, port: port)
            say("Control API listening on http://\(host):\(server.port)")
        }

        await Self.waitForTermination()
        say("shutting down")
        try await emulator.shutdown()
        OutputSink.standardOutput.flush(within: 2)
    }

    /// A line to stdout through `OutputSink`: written at once (scripts wait for these lines), and
    /// never blocking or ending the emulator when nobody reads them.
    private func say(_ line: String) {
        OutputSink.standardOutput.write(line + "\n")
    }

    /// Returns on SIGINT or SIGTERM.
    static func waitForTermination() async {
        let (stream, continuation) = AsyncStream<Int32>.makeStream()
        var sources: [DispatchSourceSignal] = []
        for signalNumber in [SIGINT, SIGTERM] {
            signal(signalNumber, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: signalNumber, queue: .global())
            source.setEventHandler { continuation.yield(signalNumber) }
            source.resume()
            sources.append(source)
        }
        for await _ in stream { break }
        sources.forEach { $0.cancel() }
    }
}
