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
    private let eventLoopExecutor: APNSEventLoopTaskExecutor

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
        self.eventLoopExecutor = APNSEventLoopTaskExecutor(group: self.group)
    }

    /// A task executor that runs on the client's event loops, for tasks that do little but send.
    ///
    /// ```swift
    /// await withTaskExecutorPreference(client.taskExecutor) {
    ///     for notification in batch { _ = try await client.send(notification, ...) }
    /// }
    /// ```
    ///
    /// By default a caller of `send` is resumed on Swift's global executor, one thread hop after
    /// the event loop received the answer. With this preference it continues on that event loop
    /// instead, which saves the hop and a thread wake-up per notification. The price: whatever
    /// the task does between sends runs on an event loop and delays every connection served by
    /// it, so keep that work short and never block in it.
    ///
    /// After `shutdown()` such tasks run on the global executor, so one whose send the shutdown
    /// failed still finishes. With an injected event loop group, shut the client down first.
    @available(macOS 15.0, iOS 18.0, watchOS 11.0, tvOS 18.0, visionOS 2.0, *)
    public var taskExecutor: any TaskExecutor { eventLoopExecutor }

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
    ///
    /// - Parameters:
    ///   - deadline: seconds for the whole send, queueing and retries included (default: the
    ///     configuration's).
    ///   - retry: this request's retries instead of the configuration's: a caller that must check
    ///     something before each attempt (a call still ringing) passes a single attempt and
    ///     retries itself.
    public func send(
        _ request: APNSRequest, environment: APNSEnvironment, credential: APNSCredential, deadline: TimeInterval? = nil,
        retry: APNSRetryPolicy? = nil
    ) async throws -> APNSResponse {
        let pool = try self.pool(for: environment, credential: credential)
        let seconds = deadline ?? configuration.defaultDeadline
        let end = NIODeadline.now() + .nanoseconds(Int64(seconds * 1e9))
        var retries = APNSRetryStateMachine(
            policy: retry ?? configuration.retry, reserve: seconds * APNSRetryStateMachine.reservedShareOfDeadline)
        while true {
            // Shut down meanwhile (a node stopping with sends hung): no further attempt.
            guard pools.withLockedValue({ $0 != nil }) else { throw APNSClientError.shutDown }
            let bearer = try authorization(for: credential)
            let token = bearer?.token
            let started = NIODeadline.now()
            let outcome: APNSRetryStateMachine.Outcome
            do {
                let response = try await pool.execute(request, authorization: bearer?.header, deadline: end)
                metrics.recordResponse(response, duration: Double((NIODeadline.now() - started).nanoseconds) / 1e9)
                outcome = .answered(response)
            } catch let error as APNSConnectionError {
                outcome = .connectionError(error)
            } catch let error as APNSPoolFailure {
                outcome = .poolFailure(error)
            } catch {
                outcome = .connectionError(.connectionClosed)
            }

            let remaining = Double((end - NIODeadline.now()).nanoseconds) / 1e9
            switch retries.next(after: outcome, remaining: remaining, random: Double.random(in: 0...1)) {
            case .deliver(let response):
                return response
            case .fail(let error):
                metrics.recordFailure(error.metricsReason)
                throw error
            case .retry(let delay, let refreshToken):
                if refreshToken, case .token(let source) = credential, let token {
                    // Apple: the token is stale, and the connection may stay wedged on it (apns.md B.3).
                    source.rejectedAsExpired(token)
                    pool.retireAll()
                }
                logger.debug("retrying a notification", metadata: [
                    "token": "\(request.deviceToken.redacted)", "attempt": "\(retries.attempts)", "delay": "\(delay)",
                ])
                metrics.recordRetry()
                if delay > 0 { try? await Task.sleep(nanoseconds: UInt64(delay * 1e9)) }
            }
        }
    }

    /// The provider token and its `authorization` value; nil for certificates, which authenticate in TLS.
    private func authorization(for credential: APNSCredential) throws -> (token: String, header: String)? {
        guard case .token(let source) = credential else { return nil }
        do { return try source.authorization() } catch { throw APNSClientError.tokenUnavailable("\(error)") }
    }

    /// Closes every connection and fails what still waits.
    public func shutdown() async {
        let all = pools.withLockedValue { pools in
            defer { pools = nil }
            return pools.map { Array($0.values) } ?? []
        }
        for pool in all { await pool.shutdown() }
        // Tasks that prefer the client's loops may still run (recording what the shutdown failed).
        eventLoopExecutor.close()
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
        let endpoint = configuration.endpointOverride.map { APNSPoolAddress(host: $0.host, port: $0.port) }
            ?? APNSPoolAddress(host: environment.host, port: APNSEnvironment.port)
        let key = PoolKey(credential: credential.identity, endpoint: endpoint)
        return try pools.withLockedValue { pools in
            guard pools != nil else { throw APNSClientError.shutDown }
            if let pool = pools![key] { return pool }
            let context: NIOSSLContext
            do { context = try makeTLSContext(for: credential) } catch { throw APNSClientError.tlsConfiguration("\(error)") }
            var poolLogger = logger
            poolLogger[metadataKey: "credential"] = "\(credential.label)"  // Team and key ids, never the key.
            let pool = APNSConnectionPool(
                endpoint: endpoint, tlsContext: context, group: group,
                configuration: configuration, metrics: metrics, logger: poolLogger
            )
            pools![key] = pool
            return pool
        }
    }

    /// Pools are found on every send, so their key is cheap to build: no string formatting.
    private struct PoolKey: Hashable {
        var credential: APNSCredential.Identity
        var endpoint: APNSPoolAddress
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
