import APNSCore
import Foundation
import Logging
import Metrics
import NIOConcurrencyHelpers
import NIOCore
import NIOPosix
import NIOSSL

/// The APNs provider client: sends typed notifications for any number of credentials and
/// environments over pooled HTTP/2 connections, with deadlines and retries.
///
/// ```swift
/// let client = APNSClient(configuration: .init())
/// let key = APNSProviderTokenSource(key: try APNSSigningKey(teamID: "T", keyID: "K", pemFile: "AuthKey_K.p8"))
/// let response = try await client.send(
///     APNSAlertNotification(alert: .init(title: "Hi")), to: token, bundleID: "com.example.app",
///     environment: .sandbox, credential: .token(key))
/// ```
public final class APNSClient: Sendable {
    public let configuration: APNSClientConfiguration
    private let group: any EventLoopGroup
    private let ownsGroup: Bool
    private let logger: Logger
    private let metrics: APNSMetrics
    /// The pools, and nil once shut down: one lock on the send path for both.
    private let pools = NIOLockedValueBox<[PoolKey: APNSConnectionPool]?>([:])

    /// `metricsFactory` defaults to the process-wide one that `MetricsSystem.bootstrap` set.
    public init(
        configuration: APNSClientConfiguration, eventLoopGroup: (any EventLoopGroup)? = nil,
        logger: Logger = Logger(label: "beckon.apns"), metricsFactory: (any MetricsFactory)? = nil
    ) {
        self.configuration = configuration
        self.metrics = APNSMetrics(factory: metricsFactory ?? MetricsSystem.factory)
        self.group = eventLoopGroup ?? MultiThreadedEventLoopGroup(numberOfThreads: System.coreCount)
        self.ownsGroup = eventLoopGroup == nil
        self.logger = logger
    }

    /// Sends one notification. Returns APNs's answer (check `isSuccess`); throws only when there
    /// was no answer (`APNSClientError`).
    public func send<Notification: APNSNotification>(
        _ notification: Notification, to deviceToken: APNSDeviceToken, bundleID: String,
        environment: APNSEnvironment, credential: APNSCredential, deadline: TimeInterval? = nil
    ) async throws -> APNSResponse {
        let request: APNSRequest
        do {
            request = try APNSRequest(notification, to: deviceToken, bundleID: bundleID)
        } catch {
            throw APNSClientError.invalidNotification(error)
        }
        return try await send(request, environment: environment, credential: credential, deadline: deadline)
    }

    /// Sends a prepared request. Retries keep its `apns-id`, so APNs and logs see one notification.
    public func send(
        _ request: APNSRequest, environment: APNSEnvironment, credential: APNSCredential, deadline: TimeInterval? = nil
    ) async throws -> APNSResponse {
        let pool = try self.pool(for: environment, credential: credential)
        let timeLimit = deadline ?? configuration.defaultDeadline
        let end = NIODeadline.now() + .nanoseconds(Int64(timeLimit * 1e9))
        var attempt = 0
        var lastConnectionError: APNSConnectionError?
        var unprocessedRetries = 0

        while true {
            attempt += 1
            let authorization: String?
            var tokenSource: APNSProviderTokenSource?
            switch credential {
            case .token(let source):
                tokenSource = source
                do { authorization = "bearer " + (try source.token()) } catch { throw APNSClientError.tokenUnavailable("\(error)") }
            case .certificate:
                authorization = nil
            }

            let started = NIODeadline.now()
            let outcome: Result<APNSResponse, any Error>
            do {
                outcome = .success(try await pool.execute(request, authorization: authorization, deadline: end).get())
            } catch {
                outcome = .failure(error)
            }

            var delay: TimeInterval? = nil
            switch outcome {
            case .success(let response):
                metrics.recordResponse(response, duration: Double((NIODeadline.now() - started).nanoseconds) / 1e9)
                switch response.retryClass {
                case .retryWithDelay where attempt < configuration.maximumAttempts:
                    delay = configuration.retryBackoff.delay(attempt: attempt)
                case .refreshTokenAndRetry where attempt < configuration.maximumAttempts:
                    // Apple: a stale token; the connection may stay wedged, so use fresh ones (apns.md B.3).
                    if let tokenSource, let authorization { tokenSource.rejectedAsExpired(String(authorization.dropFirst(7))) }
                    pool.retireAll()
                    delay = 0
                default:
                    return response
                }
                logger.debug("APNs answered; retrying", metadata: [
                    "status": "\(response.status)", "reason": "\(response.reason?.rawValue ?? "")",
                    "token": "\(request.deviceToken.redacted)", "attempt": "\(attempt)",
                ])
            case .failure(let error as APNSPoolFailure):
                metrics.recordFailure(error == .queueFull ? "overloaded" : "shutdown")
                throw error == .queueFull ? APNSClientError.overloaded : APNSClientError.shutDown
            case .failure(let error as APNSConnectionError):
                if error == .deadlineExceeded {
                    metrics.recordFailure("deadline")
                    throw APNSClientError.deadlineExceeded(attempts: attempt)
                }
                lastConnectionError = error
                // Streams APNs never processed move to another connection at once (GOAWAY,
                // REFUSED_STREAM); they do not use up an attempt.
                if error.wasNotProcessed {
                    // A server that keeps refusing must not turn this into a busy loop.
                    attempt -= 1
                    unprocessedRetries += 1
                    delay = unprocessedRetries <= 3 ? 0 : configuration.retryBackoff.delay(attempt: unprocessedRetries - 3)
                } else if attempt < configuration.maximumAttempts {
                    delay = configuration.retryBackoff.delay(attempt: attempt)
                } else {
                    metrics.recordFailure("connection")
                    throw APNSClientError.connectionFailed(attempts: attempt, lastError: error)
                }
            case .failure:
                metrics.recordFailure("connection")
                throw APNSClientError.connectionFailed(attempts: attempt, lastError: lastConnectionError ?? .connectionClosed)
            }

            let remaining = Double((end - NIODeadline.now()).nanoseconds) / 1e9
            guard let delay, remaining > delay else {
                metrics.recordFailure("deadline")
                throw APNSClientError.deadlineExceeded(attempts: attempt)
            }
            metrics.recordRetry()
            if delay > 0 { try? await Task.sleep(nanoseconds: UInt64(delay * 1e9)) }
        }
    }

    /// Closes every connection and fails what still waits.
    public func shutdown() async {
        let all = pools.withLockedValue { pools in
            defer { pools = nil }
            return pools.map { Array($0.values) } ?? []
        }
        for pool in all { await pool.shutdown() }
        if ownsGroup { try? await group.shutdownGracefully() }
    }

    /// Open connections, in-flight streams and queued requests over all pools.
    public var poolSnapshot: (connections: Int, inFlight: Int, queued: Int) {
        pools.withLockedValue { pools in
            (pools ?? [:]).values.reduce((0, 0, 0)) { total, pool in
                let snapshot = pool.snapshot
                return (total.0 + snapshot.connections, total.1 + snapshot.inFlight, total.2 + snapshot.queued)
            }
        }
    }

    // MARK: Pools

    private func pool(for environment: APNSEnvironment, credential: APNSCredential) throws -> APNSConnectionPool {
        let endpoint = configuration.endpointOverride.map { APNSEndpoint(host: $0.host, port: $0.port) }
            ?? APNSEndpoint(host: environment.host, port: APNSEnvironment.port)
        let key = PoolKey(credential: credential.identity, endpoint: endpoint)
        return try pools.withLockedValue { pools in
            guard pools != nil else { throw APNSClientError.shutDown }
            if let pool = pools![key] { return pool }
            let context: NIOSSLContext
            do { context = try makeTLSContext(for: credential) } catch { throw APNSClientError.tlsConfiguration("\(error)") }
            let pool = APNSConnectionPool(
                endpoint: endpoint, tlsContext: context, group: group,
                configuration: configuration, metrics: metrics, logger: logger
            )
            pools![key] = pool
            return pool
        }
    }

    /// Pools are found on every send, so their key is cheap to build: no string formatting.
    private struct PoolKey: Hashable {
        var credential: APNSCredential.Identity
        var endpoint: APNSEndpoint
    }

    private func makeTLSContext(for credential: APNSCredential) throws -> NIOSSLContext {
        var tls = TLSConfiguration.makeClientConfiguration()
        tls.minimumTLSVersion = .tlsv12  // Apple: TLS 1.2 or later.
        tls.applicationProtocols = ["h2"]
        if !configuration.additionalTrustRoots.isEmpty {
            tls.additionalTrustRoots = [.certificates(configuration.additionalTrustRoots)]
        }
        if case .certificate(_, let chain, let key) = credential {
            tls.certificateChain = chain.map { .certificate($0) }
            tls.privateKey = .privateKey(key)
        }
        return try NIOSSLContext(configuration: tls)
    }
}
