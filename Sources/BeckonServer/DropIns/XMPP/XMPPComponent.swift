import BeckonXMPP
import Logging
import NIOConcurrencyHelpers
import NIOCore
import NIOPosix
import ServiceLifecycle

/// Beckon's XEP-0114 component, kept connected to the XMPP server for as long as the node runs:
/// reconnected with backoff (1 s doubling to 30 s) whenever the stream ends. While it is away the
/// XMPP server answers its own publishes with `wait` errors, which do not disable registrations
/// (docs/drop-ins.md), but those pushes are lost: it must be back soon.
public struct XMPPComponent: Service {
    let settings: XMPPSettings
    let pushes: XMPPPushController
    let logger: Logger

    init(settings: XMPPSettings, pushes: XMPPPushController, logger: Logger) {
        self.settings = settings
        self.pushes = pushes
        self.logger = logger
    }

    public func run() async throws {
        var delay: Duration = .seconds(1)
        while !Task.isCancelled, !Task.isShuttingDownGracefully {
            switch await connectOnce() {
            case .unreachable:
                logger.warning("cannot reach the XMPP server's component port; retrying", metadata: [
                    "host": "\(settings.host)", "port": "\(settings.port)", "retry-in": "\(delay)",
                ])
            case .ended(let wasReady):
                // A stream that got as far as the handshake starts the backoff over.
                if wasReady { delay = .seconds(1) }
            }
            guard !Task.isShuttingDownGracefully else { break }
            let wait = delay
            try? await cancelWhenGracefulShutdown { try await Task.sleep(for: wait) }
            delay = min(delay * 2, .seconds(30))
        }
    }

    private enum Outcome {
        case unreachable
        case ended(wasReady: Bool)
    }

    /// One connection, until it closes or the node shuts down.
    private func connectOnce() async -> Outcome {
        let settings = settings, pushes = pushes, logger = logger
        let ready = NIOLockedValueBox(false)
        let onReady: @Sendable () -> Void = { ready.withLockedValue { $0 = true } }
        let channel: any Channel
        do {
            channel = try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
                .connectTimeout(.seconds(10))
                .channelOption(.socketOption(.so_keepalive), value: 1)
                .channelInitializer { channel in
                    channel.eventLoop.makeCompletedFuture {
                        try channel.pipeline.syncOperations.addHandler(XMPPComponentHandler(
                            machine: ComponentStateMachine(jid: settings.componentJID, secret: settings.componentSecret),
                            logger: logger, onReady: onReady,
                            onPublish: { publish in await pushes.publish(publish, settings: settings, logger: logger) }))
                    }
                }
                .connect(host: settings.host, port: settings.port).get()
        } catch {
            return .unreachable
        }
        await withGracefulShutdownHandler {
            // Cancelled (the node's group gave up waiting), the connection is closed at once.
            await withTaskCancellationHandler {
                try? await channel.closeFuture.get()
            } onCancel: {
                channel.close(promise: nil)
            }
        } onGracefulShutdown: {
            // The stream's end, then the connection.
            channel.writeAndFlush(channel.allocator.buffer(string: "</stream:stream>")).whenComplete { _ in
                channel.close(promise: nil)
            }
        }
        return .ended(wasReady: ready.withLockedValue { $0 })
    }
}

// Service lifecycle logs each service by its description: never the API's configuration (its
// secrets) nor the component's secret.
extension XMPPComponent: CustomStringConvertible {
    public var description: String { "XMPPComponent(\(settings))" }
}
