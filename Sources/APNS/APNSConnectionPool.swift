import APNSCore
import Logging
import NIOConcurrencyHelpers
import NIOCore
import NIOHTTP2
import NIOPosix
import NIOSSL

/// The HTTP/2 connections to one APNs endpoint for one credential: drives `APNSPoolStateMachine`.
final class APNSConnectionPool: Sendable {
    private struct Pending {
        var stream: APNSStreamRequest
        var queueTimeout: Scheduled<Void>?
    }

    private struct State {
        var machine: APNSPoolStateMachine
        var pending: [APNSPoolStateMachine.RequestID: Pending] = [:]
        var outboxes: [APNSPoolStateMachine.ConnectionID: APNSStreamOutbox] = [:]
        var nextRequestID = 0
    }

    let endpoint: APNSPoolAddress
    private let group: any EventLoopGroup
    private let tlsContext: NIOSSLContext
    private let configuration: APNSClientConfiguration
    private let metrics: APNSMetrics
    private let logger: Logger
    private let state: NIOLockedValueBox<State>

    init(
        endpoint: APNSPoolAddress, tlsContext: NIOSSLContext, group: any EventLoopGroup,
        configuration: APNSClientConfiguration, metrics: APNSMetrics, logger: Logger
    ) {
        self.endpoint = endpoint
        self.tlsContext = tlsContext
        self.group = group
        self.configuration = configuration
        self.metrics = metrics
        self.logger = logger
        self.state = NIOLockedValueBox(
            State(
                machine: APNSPoolStateMachine(
                    targetConnections: configuration.connectionsPerPool,
                    maximumQueued: configuration.maximumQueuedRequests
                )
            )
        )
    }

    /// Sends one request on some connection; throws `APNSConnectionError` or `APNSPoolFailure`.
    ///
    /// The caller waits on a continuation that the event loop resumes directly when the answer
    /// arrives: no promise, future or callback per request.
    func execute(_ request: APNSRequest, authorization: String?, deadline: NIODeadline) async throws -> APNSResponse {
        try await withAPNSResponseContinuation { continuation in
            self.start(APNSStreamRequest(request: request, authorization: authorization, deadline: deadline, continuation: continuation))
        }
    }

    private func start(_ stream: APNSStreamRequest) {
        // The common case takes one lock: a stream is free, so the request goes straight out.
        let (outbox, actions): (APNSStreamOutbox?, [APNSPoolStateMachine.Action]) = state.withLockedValue { state in
            let id = state.nextRequestID
            state.nextRequestID += 1
            let actions = state.machine.request(id)
            if case .execute(id, let connection)? = actions.first, actions.count == 1,
                let outbox = state.outboxes[connection]
            {
                return (outbox, [])
            }
            state.pending[id] = Pending(stream: stream)
            if !actions.contains(where: { $0.concerns(id) }) {
                // Queued: it may wait only until its deadline.
                state.pending[id]!.queueTimeout = group.any().scheduleTask(deadline: stream.deadline) { [self] in
                    self.queuedRequestExpired(id)
                }
            }
            return (nil, actions)
        }
        if let outbox {
            outbox.enqueue(stream)
        } else {
            run(actions)
        }
    }

    /// Retires every connection; new ones replace them. Used after `ExpiredProviderToken`, which
    /// can wedge a connection for good (apns.md B.3).
    func retireAll() {
        let actions = state.withLockedValue { state in
            state.outboxes.keys.sorted().flatMap { state.machine.goingAway($0) }
        }
        run(actions)
    }

    func shutdown() async {
        let (actions, channels) = state.withLockedValue { state in
            (state.machine.shutDown(), state.outboxes.values.map(\.channel))
        }
        run(actions)
        for channel in channels { try? await channel.closeFuture.get() }
    }

    var snapshot: (connections: Int, inFlight: Int, queued: Int) {
        state.withLockedValue { ($0.machine.openConnections, $0.machine.inFlight, $0.machine.queuedCount) }
    }

    // MARK: Driving the state machine

    private func run(_ actions: [APNSPoolStateMachine.Action]) {
        for action in actions {
            switch action {
            case .execute(let id, let connection):
                let (pending, outbox) = state.withLockedValue { state in
                    (state.pending.removeValue(forKey: id), state.outboxes[connection])
                }
                guard let pending else { continue }
                pending.queueTimeout?.cancel()
                if let outbox {
                    outbox.enqueue(pending.stream)
                } else {
                    // The connection closed between the decision and now: APNs never saw it.
                    pending.stream.fail(APNSConnectionError.goingAway)
                }
            case .fail(let id, let failure):
                let pending = state.withLockedValue { $0.pending.removeValue(forKey: id) }
                pending?.queueTimeout?.cancel()
                pending?.stream.fail(failure)
            case .connect(let connection):
                connect(connection)
            case .scheduleReconnect(let attempt):
                let delay = configuration.reconnectBackoff.delay(attempt: attempt)
                logger.warning("APNs connection failed; reconnecting", metadata: ["host": "\(endpoint.host)", "attempt": "\(attempt)", "delay": "\(delay)"])
                group.any().scheduleTask(in: .nanoseconds(Int64(delay * 1e9))) { [self] in
                    self.run(self.state.withLockedValue { $0.machine.reconnectDue() })
                }
            case .close(let connection):
                let outbox = state.withLockedValue { $0.outboxes[connection] }
                outbox?.channel.close(promise: nil)
            }
        }
    }

    private func queuedRequestExpired(_ id: APNSPoolStateMachine.RequestID) {
        let pending: Pending? = state.withLockedValue { state in
            state.machine.cancelQueued(id) ? state.pending.removeValue(forKey: id) : nil
        }
        pending?.stream.fail(APNSConnectionError.deadlineExceeded)
    }

    /// Connection events also refresh the gauges: they arrive once per read batch, not per request,
    /// and every change of in-flight, queued or open connections passes through one of them.
    private func handle(_ event: APNSConnectionEvent, on connection: APNSPoolStateMachine.ConnectionID) {
        let (actions, snapshot): ([APNSPoolStateMachine.Action], (Int, Int, Int)) = state.withLockedValue { state in
            let actions: [APNSPoolStateMachine.Action]
            switch event {
            case .settings(let maxStreams):
                actions = state.machine.settingsReceived(on: connection, maxStreams: maxStreams)
            case .goingAway:
                actions = state.machine.goingAway(connection)
            case .streamsClosed(let count):
                actions = state.machine.streamsClosed(count, on: connection)
            case .closed:
                state.outboxes.removeValue(forKey: connection)
                actions = state.machine.connectionClosed(connection)
            }
            return (actions, (state.machine.openConnections, state.machine.inFlight, state.machine.queuedCount))
        }
        metrics.poolChanged(connections: snapshot.0, inFlight: snapshot.1, queued: snapshot.2)
        if case .goingAway(let reason) = event {
            logger.info("APNs connection going away", metadata: ["host": "\(endpoint.host)", "reason": "\(reason ?? "none")"])
        }
        run(actions)
    }

    private func connect(_ connection: APNSPoolStateMachine.ConnectionID) {
        let endpoint = endpoint
        let tlsContext = tlsContext
        let pingInterval = configuration.pingInterval
        let bootstrap = ClientBootstrap(group: group)
            .connectTimeout(configuration.connectTimeout)
            .channelOption(.socketOption(.tcp_nodelay), value: 1)
            .channelInitializer { [self] channel in
                channel.eventLoop.makeCompletedFuture {
                    let tls = try NIOSSLClientHandler(
                        context: tlsContext,
                        serverHostname: endpoint.host.first?.isNumber == true || endpoint.host.contains(":") ? nil : endpoint.host
                    )
                    let handler = APNSConnectionHandler(
                        authority: endpoint.host, pingInterval: pingInterval,
                        onEvent: { [self] event in self.handle(event, on: connection) }
                    )
                    try channel.pipeline.syncOperations.addHandlers([
                        tls,
                        APNSWriteCoalescer(),
                        NIOHTTP2Handler(
                            mode: .client, connectionConfiguration: APNSHTTP2Configuration.connection,
                            streamConfiguration: APNSHTTP2Configuration.stream
                        ),
                        handler,
                    ])
                    let outbox = APNSStreamOutbox(channel: channel, handler: handler)
                    self.state.withLockedValue { $0.outboxes[connection] = outbox }
                }
            }
        bootstrap.connect(host: endpoint.host, port: endpoint.port).whenFailure { [self] error in
            logger.warning("APNs connect failed", metadata: ["host": "\(endpoint.host)", "error": "\(error)"])
            self.handle(.closed, on: connection)
        }
    }
}

extension APNSPoolStateMachine.Action {
    /// Whether this action sends or fails the request (otherwise the request was queued).
    func concerns(_ request: APNSPoolStateMachine.RequestID) -> Bool {
        switch self {
        case .execute(request, _), .fail(request, _): true
        default: false
        }
    }
}
