import BeckonProtocol
import Foundation

/// One process's sync session: the thin actor around `SyncClientStateMachine`. It feeds the
/// machine one input at a time (socket events, timers, calls from the app) and performs the
/// effects in order, so an ack is sent only after the write it acknowledges returned.
///
/// Writes go through `writer`, the lease guard: when the lease is lost or the app preempts this
/// extension, the store refuses the next write and the session stops (docs/design.md, "Sync
/// roles").
package actor SyncSession {
    package struct Configuration: Sendable {
        package var endpoint: SyncEndpoint
        package var role: SyncRole
        /// `hello.window`: messages the device accepts unacknowledged (nil: the server's default).
        package var window: Int?
        package var backoff: ReconnectBackoff
        /// A connect that has not completed by then counts as failed.
        package var connectTimeout: Duration
        /// After `bye`, how long to wait for the server's close before closing ourselves.
        package var byeTimeout: Duration

        package init(
            endpoint: SyncEndpoint, role: SyncRole, window: Int? = nil, backoff: ReconnectBackoff = ReconnectBackoff(),
            connectTimeout: Duration = .seconds(15), byeTimeout: Duration = .seconds(2)
        ) {
            self.endpoint = endpoint
            self.role = role
            self.window = window
            self.backoff = backoff
            self.connectTimeout = connectTimeout
            self.byeTimeout = byeTimeout
        }
    }

    private enum Input: Sendable {
        case machine(SyncClientStateMachine.Input)
        /// From the socket of connection number `connection`; stale ones are dropped.
        case transport(SyncTransportEvent, connection: Int)
        case reconnectTimer(Int)
    }

    package let configuration: Configuration
    let store: ClientStore
    let writer: LeaseGuard
    let transport: any SyncTransport
    let clock: any ClientClock
    let presenter: NotificationPresenter?
    let calls: CallCoordinator?

    private var machine: SyncClientStateMachine
    private let inbox: AsyncStream<Input>
    private let inboxContinuation: AsyncStream<Input>.Continuation
    private var connection: (any SyncTransportConnection)?
    private var connectionNumber = 0
    private var tasks: [Task<Void, Never>] = []
    private var runner: Task<Void, Never>?
    private var observers: [Int: AsyncStream<SyncSessionEvent>.Continuation] = [:]
    private var nextObserver = 0
    private var caughtUpWaiters: [CheckedContinuation<Bool, Never>] = []
    private var stopWaiters: [CheckedContinuation<SyncStopReason, Never>] = []
    private var caughtUpOnce = false

    /// Why it stopped, once it has.
    package private(set) var stopReason: SyncStopReason?
    /// Messages stored during this session that the device did not have.
    package private(set) var newMessageCount = 0

    package init(
        configuration: Configuration, store: ClientStore, writer: LeaseGuard, transport: any SyncTransport,
        clock: any ClientClock, presenter: NotificationPresenter?, calls: CallCoordinator?,
        jitter: JitterSource = JitterSource()
    ) {
        self.configuration = configuration
        self.store = store
        self.writer = writer
        self.transport = transport
        self.clock = clock
        self.presenter = presenter
        self.calls = calls
        self.machine = SyncClientStateMachine(
            role: configuration.role, window: configuration.window, backoff: configuration.backoff, jitter: jitter)
        (inbox, inboxContinuation) = AsyncStream.makeStream(of: Input.self)
    }

    /// Connects, and keeps connecting until stopped.
    package func start() {
        guard runner == nil else { return }
        runner = Task { await self.run() }
        inboxContinuation.yield(.machine(.start))
    }

    /// Says `bye` and closes (the app leaves the foreground, or the work is done).
    package nonisolated func stop() {
        inboxContinuation.yield(.machine(.stop))
    }

    /// Reconnects now if waiting to: the network came back, or a push says the server has
    /// something (a backoff that grew offline would otherwise wait up to its maximum).
    package nonisolated func reconnectNow() {
        inboxContinuation.yield(.machine(.reconnectNow))
    }

    /// Stops at once: the app took over (this is the extension's session).
    package nonisolated func preempt() {
        inboxContinuation.yield(.machine(.preempt))
    }

    /// Stops and waits until it has.
    @discardableResult
    package func stopAndWait() async -> SyncStopReason {
        stop()
        return await untilStopped()
    }

    /// The user read these here, and the store has them as pending read markers
    /// (`ClientStore.markRead(_:locally:as:)`): send them now if connected; otherwise they go
    /// after the next `welcome`.
    package nonisolated func sendReadMarkers(_ ids: [String]) {
        inboxContinuation.yield(.machine(.markedRead(ids)))
    }

    /// Receipts were queued in the store: sent now if the session is up and the server takes them.
    package nonisolated func sendReceipts() {
        inboxContinuation.yield(.machine(.receiptsQueued))
    }

    /// Waits until every message the server had at `welcome` is stored (true), or the session
    /// stopped first (false).
    package func untilCaughtUp() async -> Bool {
        if caughtUpOnce { return true }
        if stopReason != nil { return false }
        return await withCheckedContinuation { caughtUpWaiters.append($0) }
    }

    package func untilStopped() async -> SyncStopReason {
        if let stopReason { return stopReason }
        return await withCheckedContinuation { stopWaiters.append($0) }
    }

    /// The machine's state (for tests and diagnostics).
    package var state: SyncClientStateMachine.State { machine.state }

    /// Every event from now on.
    package func events() -> AsyncStream<SyncSessionEvent> {
        let (stream, continuation) = AsyncStream.makeStream(of: SyncSessionEvent.self)
        if let stopReason {
            continuation.yield(.stopped(stopReason))
            continuation.finish()
            return stream
        }
        nextObserver += 1
        observers[nextObserver] = continuation
        return stream
    }

    // MARK: The loop

    private func run() async {
        for await input in inbox {
            await process(input)
            if stopReason != nil { break }
        }
        inboxContinuation.finish()
        for task in tasks { task.cancel() }
        tasks.removeAll()
        if let connection {
            self.connection = nil
            await connection.close(code: SyncCloseCode.normal.rawValue)
        }
    }

    private func process(_ input: Input) async {
        let machineInput: SyncClientStateMachine.Input
        switch input {
        case .machine(let input):
            machineInput = input
        case .transport(let event, let number):
            guard number == connectionNumber else { return }
            switch event {
            case .text(let text):
                switch SyncServerFrame.parse(text) {
                case .success(let frame): machineInput = .frame(frame)
                case .failure: machineInput = .unreadableFrame
                }
            case .closed(let code):
                connection = nil
                emit(.disconnected(code: code))
                machineInput = .transportClosed(code: code)
            }
        case .reconnectTimer(let number):
            guard number == connectionNumber else { return }
            machineInput = .reconnectDelayElapsed
        }
        var effects = machine.handle(machineInput)
        // The server welcomed the session: connected (an app's status line, `BeckonApp.updates`).
        if case .frame(.welcome) = machineInput, case .streaming(let streaming) = machine.state {
            emit(.connected(sessionID: streaming.sessionID))
        }
        while !effects.isEmpty {
            let effect = effects.removeFirst()
            // Inputs an effect produces (a commit, a failed connect) go first, in order.
            effects.insert(contentsOf: await perform(effect), at: 0)
        }
    }

    private func perform(_ effect: SyncClientStateMachine.Effect) async -> [SyncClientStateMachine.Effect] {
        switch effect {
        case .connect:
            return await connect()

        case .send(let frame):
            guard let connection else { return [] }
            do {
                try await connection.send(frame.text)
                if case .read(let ids) = frame { try? store.removePendingReads(ids, as: writer) }
                if case .receipts(let receipts) = frame { try? store.removePendingReceipts(receipts, as: writer) }
                if case .bye = frame { scheduleByeTimeout(connection) }
            } catch {
                // The close event follows and decides.
            }
            return []

        case .persist(let message):
            do {
                let outcome = try store.storeSynced(message, as: writer)
                if outcome.isNew { newMessageCount += 1 }
                emit(.stored(message, isNew: outcome.isNew))
                return machine.handle(.persisted(message, isNew: outcome.isNew, isRead: outcome.isRead))
            } catch ClientStoreError.notLeaseHolder {
                return machine.handle(.persistFailed(leaseLost: true))
            } catch {
                return machine.handle(.persistFailed(leaseLost: false))
            }

        case .sendPendingReads:
            let pending = (try? store.pendingReads()) ?? []
            return pending.isEmpty ? [] : [.send(.read(ids: pending))]

        case .sendPendingReceipts:
            let pending = (try? store.pendingReceipts()) ?? []
            return pending.isEmpty ? [] : [.send(.receipts(pending))]

        case .present(let message):
            await presenter?.present(message, as: writer)
            return []

        case .clearNotifications(let ids, let markRead):
            if markRead {
                _ = try? store.markRead(ids, locally: false, as: writer)
                emit(.readElsewhere(ids))
            }
            await presenter?.clear(messageIDs: ids, as: writer)
            return []

        case .setBadge(let badge):
            try? store.setBadge(badge, as: writer)
            await presenter?.setBadge(badge)
            return []

        case .endCall(let callID, let outcome):
            calls?.callEnded(callID, outcome: outcome, as: writer)
            emit(.callEnded(callID: callID, outcome: outcome))
            return []

        case .caughtUp:
            caughtUpOnce = true
            emit(.caughtUp)
            for waiter in caughtUpWaiters { waiter.resume(returning: true) }
            caughtUpWaiters.removeAll()
            return []

        case .close(let code):
            if let connection { await connection.close(code: code) }
            return []

        case .scheduleReconnect(let delay):
            let number = connectionNumber
            let clock = self.clock
            let inbox = inboxContinuation
            tasks.append(Task {
                do { try await clock.sleep(for: delay) } catch { return }
                inbox.yield(.reconnectTimer(number))
            })
            return []

        case .stopped(let reason):
            stopReason = reason
            emit(.stopped(reason))
            for observer in observers.values { observer.finish() }
            observers.removeAll()
            for waiter in caughtUpWaiters { waiter.resume(returning: false) }
            caughtUpWaiters.removeAll()
            for waiter in stopWaiters { waiter.resume(returning: reason) }
            stopWaiters.removeAll()
            return []
        }
    }

    private func connect() async -> [SyncClientStateMachine.Effect] {
        connectionNumber += 1
        let number = connectionNumber
        let opened: (any SyncTransportConnection)?
        do {
            opened = try await withConnectTimeout { [transport, configuration] in
                try await transport.connect(to: configuration.endpoint)
            }
        } catch {
            opened = nil
        }
        guard let opened else { return machine.handle(.transportFailed) }
        guard let cursor = try? store.cursor() else {
            await opened.close(code: SyncCloseCode.normal.rawValue)
            return machine.handle(.transportFailed)
        }
        connection = opened
        let inbox = inboxContinuation
        tasks.append(Task {
            for await event in opened.events {
                inbox.yield(.transport(event, connection: number))
            }
        })
        return machine.handle(.transportOpened(cursor: cursor))
    }

    private func withConnectTimeout(
        _ operation: @escaping @Sendable () async throws -> any SyncTransportConnection
    ) async throws -> any SyncTransportConnection {
        let clock = self.clock
        let timeout = configuration.connectTimeout
        return try await withThrowingTaskGroup(of: (any SyncTransportConnection)?.self) { group in
            group.addTask { try await operation() }
            group.addTask {
                try await clock.sleep(for: timeout)
                return nil
            }
            defer { group.cancelAll() }
            guard let first = try await group.next(), let connection = first else { throw CancellationError() }
            return connection
        }
    }

    private func scheduleByeTimeout(_ connection: any SyncTransportConnection) {
        let clock = self.clock
        let timeout = configuration.byeTimeout
        tasks.append(Task {
            do { try await clock.sleep(for: timeout) } catch { return }
            await connection.close(code: SyncCloseCode.normal.rawValue)
        })
    }

    private func emit(_ event: SyncSessionEvent) {
        for observer in observers.values { observer.yield(event) }
    }
}
