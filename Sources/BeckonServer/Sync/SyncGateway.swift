import BeckonProtocol
import BeckonStore
import Foundation
import Hummingbird
import Logging
import NIOCore
import NIOHTTP1
import NIOHTTPTypesHTTP1

/// What `GET /v1/sync` with an upgrade gets (`SyncGateway.decide`).
enum SyncUpgradeDecision: Sendable {
    /// Upgrade, with these extra response headers (the subprotocol).
    case upgrade(Device, HTTPHeaders)
    /// Answer with this error instead (401 before the upgrade, 429, …).
    case refuse(APIError)
}

/// `GET /v1/sync` (docs/sync-protocol.md): the WebSocket sync gateway over a store and a hub.
/// `BeckonHTTPChannel` asks it whether to upgrade and then starts the session
/// (`SyncConnection.start`).
public struct SyncGateway: Sendable {
    let store: any SyncConnection.Driver.Store
    /// The API's own checks of who a request is.
    let auth: Authenticator
    public let hub: SyncHub
    public let limits: SyncLimits
    let logger: Logger
    let now: @Sendable () -> Date
    /// `limits.sync-connects-per-minute` per device; nil when 0 (off).
    let connectRate: RateLimiter?

    /// - Parameter connectsPerMinute: sessions a device may open per minute (a burst of as many,
    ///   then one every 60/n s); 0: no limit.
    init(
        store: any SyncConnection.Driver.Store, auth: Authenticator, hub: SyncHub, limits: SyncLimits, connectsPerMinute: Int, logger: Logger,
        now: @escaping @Sendable () -> Date = { Date() }
    ) {
        self.store = store
        self.auth = auth
        self.hub = hub
        self.limits = limits
        self.logger = logger
        self.now = now
        self.connectRate = connectsPerMinute > 0 ? RateLimiter(
            name: "sync-connects-per-minute", scope: "device", perSecond: Double(connectsPerMinute) / 60,
            burst: Double(connectsPerMinute), share: hub.share) : nil
    }

    static let path = "/v1/sync"
    static let subprotocol = SyncProtocol.subprotocol

    /// Decides an upgrade request, before the upgrade: the device credential (401 with the API's
    /// usual error body, the same `Authenticator` as the API's), then the device's connect rate
    /// (429 with `Retry-After`). An upgrade to another path is 404.
    func decide(_ head: HTTPRequestHead) async -> SyncUpgradeDecision {
        guard head.uri.split(separator: "?", maxSplits: 1).first.map(String.init) == Self.path else {
            return .refuse(.notFound("only \(Self.path) is a WebSocket"))
        }
        guard head.method == .GET else {
            return .refuse(APIError(status: .methodNotAllowed, code: .methodNotAllowed, message: "\(Self.path) takes GET"))
        }
        let device: Device
        do {
            let request = Request(head: try HTTPRequest(head, secure: false, splitCookie: false), body: .init(buffer: ByteBuffer()))
            device = try await auth.device(request.headers[.authorization])
            try connectRate?.take(device.ref.description, now: now())
        } catch let error as APIError {
            return .refuse(error)
        } catch let error as BeckonStoreError {
            return .refuse(APIError(error))
        } catch {
            logger.error("sync upgrade failed", metadata: ["error": "\(String(reflecting: error))"])
            return .refuse(APIError(status: .internalServerError, code: .internalError, message: "internal error"))
        }
        // Answer the subprotocol if the device asked for it (RFC 6455 §4.2.2); a device that
        // names none is served all the same.
        let offered = head.headers["Sec-WebSocket-Protocol"]
            .flatMap { $0.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) } }
        var headers = HTTPHeaders()
        if offered.contains(Self.subprotocol) { headers.add(name: "Sec-WebSocket-Protocol", value: Self.subprotocol) }
        return .upgrade(device, headers)
    }
}

extension SyncLimits {
    var stateMachineLimits: SyncSessionStateMachine.Limits {
        .init(defaultWindow: min(Self.defaultWindow, maximumWindow), maximumWindow: maximumWindow)
    }
}
