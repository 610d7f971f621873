import APNSCore
import Foundation
import NIOCore
import NIOSSL

/// Every limit and timing of the client, with the defaults documented in README.md.
public struct APNSClientConfiguration: Sendable {
    /// Where to connect. `nil` means Apple's host for the environment, port 443.
    public var endpointOverride: (host: String, port: Int)?
    /// Extra roots to trust, e.g. the APNs emulator's CA. Apple's roots come from the system store.
    public var additionalTrustRoots: [NIOSSLCertificate]
    /// HTTP/2 connections per (endpoint, credential). Apple: spread load over several connections.
    public var connectionsPerPool: Int
    /// Requests waiting for a free stream, per pool. Beyond it `send` fails with `.overloaded` at once.
    public var maximumQueuedRequests: Int
    /// How long one notification may take, queueing and retries included.
    public var defaultDeadline: TimeInterval
    /// Attempts per notification (the first included) and the delay between them, for 5xx, 429
    /// and connection failures.
    public var retry: APNSRetryPolicy
    /// Delay before reconnecting after failed connection attempts.
    public var reconnectBackoff: APNSBackoff
    public var connectTimeout: TimeAmount
    /// A connection idle this long gets a PING; one unanswered for as long is closed.
    public var pingInterval: TimeAmount
    /// Provider-token age at which a new one is minted (clamped to Apple's 20–60 minutes).
    public var tokenRefreshAge: TimeInterval

    public init(
        endpointOverride: (host: String, port: Int)? = nil,
        additionalTrustRoots: [NIOSSLCertificate] = [],
        connectionsPerPool: Int = 2,
        maximumQueuedRequests: Int = 10_000,
        defaultDeadline: TimeInterval = 30,
        retry: APNSRetryPolicy = APNSRetryPolicy(maximumAttempts: 4, backoff: APNSBackoff(base: 0.2, cap: 5)),
        reconnectBackoff: APNSBackoff = APNSBackoff(base: 0.1, cap: 30),
        connectTimeout: TimeAmount = .seconds(10),
        pingInterval: TimeAmount = .seconds(60),
        tokenRefreshAge: TimeInterval = 50 * 60
    ) {
        self.endpointOverride = endpointOverride
        self.additionalTrustRoots = additionalTrustRoots
        self.connectionsPerPool = connectionsPerPool
        self.maximumQueuedRequests = maximumQueuedRequests
        self.defaultDeadline = defaultDeadline
        self.retry = retry
        self.reconnectBackoff = reconnectBackoff
        self.connectTimeout = connectTimeout
        self.pingInterval = pingInterval
        self.tokenRefreshAge = tokenRefreshAge
    }
}
