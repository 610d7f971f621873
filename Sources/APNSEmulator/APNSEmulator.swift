import APNSCore
import Foundation
import Logging
import NIOConcurrencyHelpers
import NIOCore
import NIOHTTP2
import NIOPosix
import NIOSSL
import X509

/// An APNs-compatible HTTP/2-over-TLS server for tests and benchmarks (apns.md C.4, H).
///
/// ```swift
/// var configuration = APNSEmulatorConfiguration(authKeys: [key], bundleIDs: ["com.example.app"])
/// let emulator = try APNSEmulator(configuration: configuration)
/// try await emulator.start()
/// // connect to 127.0.0.1:\(emulator.port), trusting emulator.caCertificatePEM
/// try await emulator.shutdown()
/// ```
public final class APNSEmulator: Sendable {
    public let configuration: APNSEmulatorConfiguration
    /// The CA that signed the server certificate, when the certificate was generated; nil otherwise.
    public let caCertificatePEM: String?
    /// The server certificate chain in use (PEM).
    public let serverCertificatePEM: String

    let core: EmulatorCore
    let registry = ConnectionRegistry()
    private let policy: RequestPolicy
    private let sslContext: NIOSSLContext
    private let running = NIOLockedValueBox<Running?>(nil)
    /// Control APIs started with `startControl`, stopped by `shutdown()`.
    let controlServers = NIOLockedValueBox<[APNSEmulatorControlServer]>([])
    private let logger: Logger

    private struct Running: @unchecked Sendable {
        var group: MultiThreadedEventLoopGroup
        var channel: Channel
        var port: Int
    }

    public init(configuration: APNSEmulatorConfiguration, logger: Logger = Logger(label: "beckon.apns-emulator")) throws {
        self.configuration = configuration
        self.logger = logger
        let chainPEM: String
        let keyPEM: String
        switch configuration.tls {
        case .generated:
            let generated = try EmulatorCertificates.generate(now: Date())
            chainPEM = generated.leafCertificatePEM
            keyPEM = generated.leafPrivateKeyPEM
            caCertificatePEM = generated.caCertificatePEM
            if let path = configuration.caCertificateOutputPath {
                try generated.caCertificatePEM.write(toFile: path, atomically: true, encoding: .utf8)
            }
        case .pem(let chain, let key):
            (chainPEM, keyPEM, caCertificatePEM) = (chain, key, nil)
        case .files(let chainPath, let keyPath):
            chainPEM = try String(contentsOfFile: chainPath, encoding: .utf8)
            keyPEM = try String(contentsOfFile: keyPath, encoding: .utf8)
            caCertificatePEM = nil
        }
        serverCertificatePEM = chainPEM
        let chain = try NIOSSLCertificate.fromPEMBytes(Array(chainPEM.utf8)).map { NIOSSLCertificateSource.certificate($0) }
        let key = try NIOSSLPrivateKey(bytes: Array(keyPEM.utf8), format: .pem)
        var tls = TLSConfiguration.makeServerConfiguration(certificateChain: chain, privateKey: .privateKey(key))
        tls.minimumTLSVersion = .tlsv12
        // Offer h2; a client that offers no ALPN at all is still spoken to in HTTP/2 (aioapns does that).
        tls.applicationProtocols = ["h2"]
        if !configuration.trustedClientCAPEMs.isEmpty {
            let roots = try configuration.trustedClientCAPEMs.flatMap { try NIOSSLCertificate.fromPEMBytes(Array($0.utf8)) }
            tls.trustRoots = .certificates(roots)
            tls.certificateVerification = .optionalVerification
        }
        sslContext = try NIOSSLContext(configuration: tls)
        core = EmulatorCore(configuration: configuration)
        policy = RequestPolicy(configuration: configuration)
    }

    // MARK: Lifecycle

    /// Binds and starts serving. The port is then in `port`.
    public func start() async throws {
        let threads = configuration.threads ?? System.coreCount
        let group = MultiThreadedEventLoopGroup(numberOfThreads: max(1, threads))
        let sslContext = self.sslContext
        let core = self.core
        let policy = self.policy
        let registry = self.registry
        let configuration = self.configuration
        let bootstrap = ServerBootstrap(group: group)
            .serverChannelOption(ChannelOptions.backlog, value: 256)
            .serverChannelOption(ChannelOptions.socketOption(.so_reuseaddr), value: 1)
            .childChannelOption(ChannelOptions.socketOption(.tcp_nodelay), value: 1)
            .childChannelOption(ChannelOptions.maxMessagesPerRead, value: 16)
            .childChannelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    let rawCloser = RawCloseHandler()
                    try channel.pipeline.syncOperations.addHandler(rawCloser)
                    try channel.pipeline.syncOperations.addHandler(NIOSSLServerHandler(context: sslContext))
                    try channel.pipeline.syncOperations.addHandler(
                        ConnectionSetupHandler(core: core, policy: policy, registry: registry,
                                               configuration: configuration, rawCloser: rawCloser)
                    )
                }
            }
        do {
            let channel = try await bootstrap.bind(host: configuration.host, port: configuration.port).get()
            let port = channel.localAddress?.port ?? configuration.port
            try running.withLockedValue { running in
                guard running == nil else { throw APNSEmulatorError.alreadyStarted }
                running = Running(group: group, channel: channel, port: port)
            }
            logger.info("APNs emulator listening", metadata: ["port": "\(port)", "environment": "\(configuration.environment)"])
        } catch {
            try? await group.shutdownGracefully()
            throw error
        }
    }

    /// The bound port; 0 before `start()`.
    public var port: Int { running.withLockedValue { $0?.port ?? 0 } }

    /// Sends GOAWAY `Shutdown` on every connection, closes them and the listener.
    public func shutdown() async throws {
        for control in controlServers.withLockedValue({ servers in defer { servers = [] }; return servers }) {
            try? await control.shutdown()
        }
        guard let current = running.withLockedValue({ state -> Running? in defer { state = nil }; return state }) else { return }
        for handle in registry.all { handle.run { $0.goAwayNow(reason: .shutdown) } }
        try? await current.channel.close()
        // Let the GOAWAYs go out and the connections close.
        try? await Task.sleep(for: .milliseconds(100))
        for handle in registry.all { try? await handle.channel.close() }
        try await current.group.shutdownGracefully()
    }

    /// Writes the generated CA certificate to a file, for clients configured by path.
    public func writeCACertificate(to path: String) throws {
        try (caCertificatePEM ?? serverCertificatePEM).write(toFile: path, atomically: true, encoding: .utf8)
    }
}

/// Waits for the TLS handshake, then decides token vs certificate auth and installs HTTP/2.
final class ConnectionSetupHandler: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = NIOAny

    private let core: EmulatorCore
    private let policy: RequestPolicy
    private let registry: ConnectionRegistry
    private let configuration: APNSEmulatorConfiguration
    private let rawCloser: RawCloseHandler

    init(core: EmulatorCore, policy: RequestPolicy, registry: ConnectionRegistry,
         configuration: APNSEmulatorConfiguration, rawCloser: RawCloseHandler) {
        self.core = core
        self.policy = policy
        self.registry = registry
        self.configuration = configuration
        self.rawCloser = rawCloser
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        // NIOTLS's `TLSUserEvent.handshakeCompleted`; NIOTLS isn't a declared dependency, so match by name.
        guard String(describing: event).hasPrefix("handshakeCompleted") else {
            context.fireUserInboundEventTriggered(event)
            return
        }
        var authentication = ConnectionRules.Authentication.token
        if !configuration.trustedClientCAPEMs.isEmpty,
            let ssl = try? context.pipeline.syncOperations.handler(type: NIOSSLServerHandler.self),
            let peer = ssl.peerCertificate
        {
            guard let base = Self.userID(of: peer) else {
                context.close(promise: nil)
                return
            }
            authentication = .certificate(baseTopic: base)
        }
        let streams = core.state.withLockedValue { $0.maxConcurrentStreams }
        let rules = ConnectionRules(
            authentication: authentication,
            configuredStreamLimit: streams,
            initialStreamsBeforeAuthentication: configuration.initialStreamsBeforeAuthentication
        )
        // The SETTINGS APNs was seen sending (apns.md C.2), with the stream limit of this connection.
        let settings: HTTP2Settings = [
            HTTP2Setting(parameter: .headerTableSize, value: 4096),
            HTTP2Setting(parameter: .maxConcurrentStreams, value: rules.advertisedStreamLimit),
            HTTP2Setting(parameter: .initialWindowSize, value: 65_535),
            HTTP2Setting(parameter: .maxFrameSize, value: 16_384),
            HTTP2Setting(parameter: .maxHeaderListSize, value: 8000),
        ]
        do {
            let http2 = NIOHTTP2Handler(
                mode: .server, connectionConfiguration: EmulatorHTTP2Configuration.connection(settings: settings, streams: streams),
                streamConfiguration: EmulatorHTTP2Configuration.stream(streams: streams))
            let handler = EmulatorConnectionHandler(
                core: core, policy: policy, registry: registry, rules: rules,
                idleTimeout: configuration.idleTimeout, rawCloser: rawCloser
            )
            try context.pipeline.syncOperations.addHandlers([http2, handler], position: .after(self))
        } catch {
            context.close(promise: nil)
            return
        }
        context.fireUserInboundEventTriggered(event)
        context.pipeline.syncOperations.removeHandler(context: context, promise: nil)
    }

    func errorCaught(context: ChannelHandlerContext, error: Error) {
        context.close(promise: nil)  // TLS failures.
    }

    /// The subject's UID attribute (0.9.2342.19200300.100.1.1): the base topic (apns.md B.4).
    static func userID(of certificate: NIOSSLCertificate) -> String? {
        guard let der = try? certificate.toDERBytes(), let parsed = try? Certificate(derEncoded: der) else { return nil }
        for rdn in parsed.subject {
            for attribute in rdn where attribute.type.description == "0.9.2342.19200300.100.1.1" {
                return String(describing: attribute.value)
            }
        }
        return nil
    }
}
