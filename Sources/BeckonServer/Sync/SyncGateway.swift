import BeckonStore
import Foundation
import Hummingbird
import HummingbirdWebSocket
import NIOCore

/// The limits of the sync gateway, each explicit (docs/sync-protocol.md, "Limits").
public struct SyncLimits: Sendable, Equatable {
    /// `sync.max-window`: the largest in-flight window granted (a larger `hello.window` is
    /// capped). Also the window granted when `hello` names none, if below 100.
    public var maximumWindow: Int
    /// `sync.max-frame-bytes`: the largest message a device may send (a bigger one closes the
    /// connection with 1009).
    public var maximumFrameBytes: Int
    /// The largest frame the server sends: a `message` frame carries a whole payload.
    public var maximumOutboundFrameBytes: Int
    /// `sync.ping-interval-seconds`: the server sends a WebSocket ping this often and closes a
    /// connection whose pong does not come back within the next interval (nil: no pings).
    public var pingInterval: Duration?
    /// Frames read from a device and not yet processed; beyond this the session is closed with
    /// 4029 (a device must not pipeline without bound).
    public var maximumQueuedFrames: Int
    /// How long the server waits for the device's answer to its close frame.
    public var closeTimeout: Duration

    public static let defaultWindow = 100

    public init(
        maximumWindow: Int = 100, maximumFrameBytes: Int = 64 * 1024, maximumOutboundFrameBytes: Int = 128 * 1024,
        pingInterval: Duration? = .seconds(60), maximumQueuedFrames: Int = 128, closeTimeout: Duration = .seconds(2)
    ) {
        self.maximumWindow = maximumWindow
        self.maximumFrameBytes = maximumFrameBytes
        self.maximumOutboundFrameBytes = maximumOutboundFrameBytes
        self.pingInterval = pingInterval
        self.maximumQueuedFrames = maximumQueuedFrames
        self.closeTimeout = closeTimeout
    }

    /// The limits a configuration sets; the outbound frame limit leaves room for the largest
    /// payload and the frame's own fields.
    public init(_ configuration: BeckonServerConfiguration) {
        self.init(
            maximumWindow: configuration.syncMaximumWindow,
            maximumFrameBytes: configuration.syncMaximumFrameBytes,
            maximumOutboundFrameBytes: configuration.maximumPayloadBytes + 4096,
            pingInterval: configuration.syncPingIntervalSeconds > 0 ? .seconds(configuration.syncPingIntervalSeconds) : nil)
    }

    var stateMachineLimits: SyncSessionStateMachine.Limits {
        .init(defaultWindow: min(Self.defaultWindow, maximumWindow), maximumWindow: maximumWindow)
    }

    /// hummingbird-websocket's settings for these limits.
    public var webSocketConfiguration: WebSocketServerConfiguration {
        WebSocketServerConfiguration(
            maxFrameSize: max(maximumFrameBytes, maximumOutboundFrameBytes),
            autoPing: pingInterval.map { .enabled(timePeriod: $0) } ?? .disabled,
            closeTimeout: closeTimeout)
    }
}

/// The request context of the WebSocket upgrade router: the device authenticated by
/// `SyncAuthenticationMiddleware` travels in it to the session.
public struct SyncRequestContext: RequestContext, WebSocketRequestContext {
    public var coreContext: CoreRequestContextStorage
    public let webSocket: WebSocketHandlerReference<Self>
    /// The connection and, once `SyncAuthenticationMiddleware` has run, the device. A reference:
    /// hummingbird-websocket keeps copies of this context in the closures and async frames of
    /// every connection's task for as long as the connection lives, so its size counts per
    /// idle session (a `Device` inline is about 200 bytes).
    var upgrade: SyncUpgrade

    var device: Device? { upgrade.device }

    public init(source: Source) {
        self.coreContext = .init(source: source)
        self.webSocket = .init()
        self.upgrade = SyncUpgrade(channel: source.channel, device: nil)
    }
}

/// What the upgrade request carries to the session: its connection and authenticated device.
final class SyncUpgrade: Sendable {
    /// The connection, which the session closes if the device does not answer its close frame.
    let channel: any Channel
    let device: Device?

    init(channel: any Channel, device: Device?) {
        self.channel = channel
        self.device = device
    }
}

/// `GET /v1/sync` (docs/sync-protocol.md): the WebSocket sync gateway over a store and a hub.
public struct SyncGateway: Sendable {
    let store: any BeckonStore
    public let hub: SyncHub
    public let limits: SyncLimits
    let now: @Sendable () -> Date

    public init(store: any BeckonStore, hub: SyncHub, limits: SyncLimits, now: @escaping @Sendable () -> Date = { Date() }) {
        self.store = store
        self.hub = hub
        self.limits = limits
        self.now = now
    }

    static let subprotocol = "beckon.v1"
    static let subprotocolHeader = HTTPFields.Element.Name("Sec-WebSocket-Protocol")!

    /// The router consulted for upgrade requests only. A request it does not upgrade (a wrong
    /// path, no or a bad credential) goes on to the HTTP router, whose `GET /v1/sync` answers
    /// it with 401 and the usual error body (`BeckonAPI.syncWithoutUpgrade`).
    public func router() -> Router<SyncRequestContext> {
        let router = Router(context: SyncRequestContext.self)
        router.add(middleware: SyncAuthenticationMiddleware(store: store))
        router.ws("v1/sync") { request, context in
            guard context.device != nil else { return .dontUpgrade }
            // Answer the subprotocol if the device asked for it (RFC 6455 §4.2.2); a device that
            // names none is served all the same.
            let offered = request.headers[values: Self.subprotocolHeader]
                .flatMap { $0.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) } }
            var headers = HTTPFields()
            if offered.contains(Self.subprotocol) { headers[Self.subprotocolHeader] = Self.subprotocol }
            return .upgrade(headers)
        } onUpgrade: { inbound, outbound, context in
            guard let device = context.requestContext.device else { return }
            await SyncConnection.run(
                device: device, inbound: inbound, outbound: outbound, gateway: self,
                channel: context.requestContext.upgrade.channel, logger: context.logger)
        }
        return router
    }
}

/// Authenticates the upgrade request by its device credential (`Authorization: Bearer bkd_…`),
/// before the upgrade: a request without a current credential is not upgraded.
struct SyncAuthenticationMiddleware: RouterMiddleware {
    typealias Context = SyncRequestContext
    let store: any BeckonStore

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        guard case .device(let secret)? = BearerCredential(request),
            let device = try await store.authenticateDevice(credential: secret)
        else {
            return Response(status: .unauthorized)
        }
        var context = context
        context.upgrade = SyncUpgrade(channel: context.upgrade.channel, device: device)
        return try await next(request, context)
    }
}
