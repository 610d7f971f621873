import NIOCore
import NIOHTTP1
import NIOPosix

/// The emulator's control API: plain HTTP/1.1 with JSON bodies on its own port, so tests written
/// in any language (and shell scripts with curl) can drive the emulator. Routes are in
/// `docs/apns-emulator.md`.
///
/// ```swift
/// let control = try await emulator.startControl(host: "127.0.0.1", port: 0)
/// // curl http://127.0.0.1:\(control.port)/counters
/// ```
public final class APNSEmulatorControlServer: Sendable {
    public let host: String
    /// The bound port (useful when started on port 0).
    public let port: Int
    private let channel: Channel

    private init(host: String, port: Int, channel: Channel) {
        self.host = host
        self.port = port
        self.channel = channel
    }

    /// Binds and starts serving `emulator`'s control API. Port 0 = any free port.
    public static func start(
        emulator: APNSEmulator,
        host: String = "127.0.0.1",
        port: Int = 0,
        group: any EventLoopGroup = MultiThreadedEventLoopGroup.singleton
    ) async throws -> APNSEmulatorControlServer {
        let router = ControlRouter(emulator: emulator)
        let channel = try await ServerBootstrap(group: group)
            .serverChannelOption(ChannelOptions.socketOption(.so_reuseaddr), value: 1)
            .childChannelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.configureHTTPServerPipeline(withErrorHandling: true)
                    try channel.pipeline.syncOperations.addHandler(ControlHTTPHandler(router: router))
                }
            }
            .bind(host: host, port: port).get()
        return APNSEmulatorControlServer(host: host, port: channel.localAddress?.port ?? port, channel: channel)
    }

    /// Stops listening. Open control connections finish their current request.
    public func shutdown() async throws {
        try await channel.close()
    }
}

extension APNSEmulator {
    /// Starts the control API for this emulator; `shutdown()` of the emulator stops it too.
    public func startControl(host: String = "127.0.0.1", port: Int = 0) async throws -> APNSEmulatorControlServer {
        let server = try await APNSEmulatorControlServer.start(emulator: self, host: host, port: port)
        controlServers.withLockedValue { $0.append(server) }
        return server
    }
}
