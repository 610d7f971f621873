import BeckonProtocol
import BeckonStore
import Foundation
import Logging
import Metrics
import ServiceLifecycle
import NIOConcurrencyHelpers

/// What the rest of the server knows of a device's sync sessions (issue 4, point 5): whether it
/// is connected, since when, its last ack, and how its last session ended. The delivery planner
/// reads it (design rule 5: a device that dropped with unacknowledged messages is pushed again).
///
/// Kept in memory by the node the device connected to; it starts empty at each start.
public struct SyncPresence: Sendable, Equatable {
    /// When the current session connected; nil while the device has no live session here.
    public var connectedSince: Date?
    /// The highest sequence the device acknowledged in a session (including its hello cursor).
    public var lastAck: Int64?
    public var lastAckAt: Date?
    /// How the last session ended; nil while the first session is still live.
    public var lastEnd: SyncSessionEnd?
    public var lastEndAt: Date?

    public var isConnected: Bool { connectedSince != nil }
}

/// One live session: its identity, as the hub sees it, and its inbox. Events (frames from the
/// socket, wake-ups and "read elsewhere" from the hub, closes) are queued here and processed one
/// at a time, in order, by `SyncConnection.Driver`, which owns the state machine.
///
/// No task waits on an idle session's inbox: the driver is parked in the inbox while there is
/// nothing to do, and the first event queued takes it out and starts a short-lived task that
/// processes events until the inbox is empty again, then parks the driver and ends. A Swift task
/// keeps every slab of async frames it ever used until it ends, so a long-lived task per session
/// that once ran the store calls of `hello` would hold that memory for the life of the
/// connection (see `SyncConnection`). Until the hub has registered the session (`start`), events
/// only queue: a wake-up cannot reach a session the hub does not know yet, so the session must
/// not read the store before.
final class SyncSessionHandle: Sendable {
    enum Event: Sendable {
        case frame(String)
        case invalidFrame(SyncFrameError)
        case newMessages
        case readElsewhere(ids: [String], badge: Int)
        case close(SyncCloseCode, reason: String, end: SyncSessionEnd)
        case inboundEnded
    }

    private struct Inbox: Sendable {
        /// Events not yet processed, in order.
        var events: [Event] = []
        /// `frame` events among `events` (4029 past the limit).
        var framesQueued = 0
        /// Coalesces wake-ups: one `newMessages` waits in the queue at most.
        var wakeQueued = false
        /// The driver while no task processes events; nil before `start`, while a task
        /// processes events, and once closed.
        var driver: SyncConnection.Driver?
        /// The session ended: events are no longer queued.
        var closed = false
    }

    let id: String
    let ref: DeviceRef
    let user: UserRef
    let connectedAt: Date
    private let hub: SyncHub
    private let logger: Logger
    private let inbox = NIOLockedValueBox(Inbox())

    init(id: String, device: Device, connectedAt: Date, hub: SyncHub, logger: Logger) {
        self.id = id
        self.ref = device.ref
        self.user = device.user
        self.connectedAt = connectedAt
        self.hub = hub
        self.logger = logger
    }

    /// Registers the session with the hub (which replaces an older session of the device), then
    /// processes what was queued meanwhile. While the server shuts down, the session is closed
    /// with 1001 at once instead.
    func start(_ driver: SyncConnection.Driver) {
        Task.detached {
            let registered = await self.hub.register(self)
            let driver: SyncConnection.Driver? = self.inbox.withLockedValue { inbox in
                if !registered {
                    inbox.events = [.close(.goingAway, reason: "server shutting down", end: .shutdown)]
                    inbox.framesQueued = 0
                    inbox.wakeQueued = false
                }
                guard !inbox.events.isEmpty else {
                    inbox.driver = driver
                    return nil
                }
                return driver
            }
            if let driver { await self.process(driver) }
        }
    }

    // MARK: Posting events

    func newMessages() {
        post { inbox in
            guard !inbox.wakeQueued else { return false }
            inbox.wakeQueued = true
            inbox.events.append(.newMessages)
            return true
        }
    }

    func readElsewhere(ids: [String], badge: Int) { post(.readElsewhere(ids: ids, badge: badge)) }

    func close(_ code: SyncCloseCode, reason: String, end: SyncSessionEnd) {
        post(.close(code, reason: reason, end: end))
    }

    /// Queues a frame from the device; false if `limit` frames are already waiting.
    func frameArrived(_ text: String, limit: Int) -> Bool {
        var accepted = true
        post { inbox in
            guard inbox.framesQueued < limit else {
                accepted = false
                return false
            }
            inbox.framesQueued += 1
            inbox.events.append(.frame(text))
            return true
        }
        return accepted
    }

    func invalidFrame(_ violation: SyncFrameError) { post(.invalidFrame(violation)) }

    /// The connection ended (the device closed, the connection dropped, or the session was
    /// closed and the device answered or timed out).
    func inboundEnded() { post(.inboundEnded) }

    private func post(_ event: Event) {
        post { inbox in
            inbox.events.append(event)
            return true
        }
    }

    /// Runs `enqueue` on the inbox unless the session is closed; if it queued something and no
    /// task is processing events, starts one.
    private func post(_ enqueue: (inout Inbox) -> Bool) {
        let driver: SyncConnection.Driver? = inbox.withLockedValue { inbox in
            guard !inbox.closed, enqueue(&inbox) else { return nil }
            let driver = inbox.driver
            inbox.driver = nil
            return driver
        }
        if let driver {
            // Detached: the session's work belongs to no caller (a hub wake-up comes from an
            // HTTP request's task), and inherits neither its task-locals nor its priority.
            Task.detached { await self.process(driver) }
        }
    }

    // MARK: Processing

    /// Processes events until the inbox is empty (the driver is parked again) or the session ends.
    private func process(_ driver: SyncConnection.Driver) async {
        var driver = driver
        while true {
            let next: Event? = inbox.withLockedValue { inbox in
                guard !inbox.events.isEmpty else {
                    inbox.driver = driver
                    return nil
                }
                let event = inbox.events.removeFirst()
                // Give the storage back: an idle session keeps no buffer.
                if inbox.events.isEmpty { inbox.events = [] }
                switch event {
                case .frame: inbox.framesQueued -= 1
                case .newMessages: inbox.wakeQueued = false
                default: break
                }
                return event
            }
            guard let event = next else { return }
            if let end = await driver.handle(event) {
                await finish(end)
                return
            }
        }
    }

    /// The close frame is out (or the connection is gone); `SyncChannelHandler` closes the
    /// connection when the device answers or after the close timeout.
    private func finish(_ end: SyncSessionEnd) async {
        inbox.withLockedValue { inbox in
            inbox.closed = true
            inbox.events = []
        }
        await hub.unregister(self, end: end)
        logger.debug("sync session ended", metadata: ["device": "\(ref)", "session": "\(id)", "end": "\(end.rawValue)"])
    }
}

/// The live sync sessions of this server process, by device and by user, and the devices'
/// presence. One per process; `POST /v1/messages` tells it about new messages after they are
/// durable, and it wakes the sessions of their users, which then read from the store (the hub
/// never holds messages).
///
/// As a `Service` it closes every session with 1001 when graceful shutdown starts (run it after
/// the HTTP application in a `ServiceGroup` so it is shut down first, which is what
/// `BeckonHTTPServer.application` does).
public actor SyncHub: Service {
    private var sessionsByDevice: [DeviceRef: SyncSessionHandle] = [:]
    private var devicesByUser: [UserRef: Set<DeviceRef>] = [:]
    private var presenceByDevice: [DeviceRef: SyncPresence] = [:]
    private var shuttingDown = false
    private var idleWaiters: [CheckedContinuation<Void, Never>] = []
    private let now: @Sendable () -> Date
    private let observers = NIOLockedValueBox<[@Sendable (DeliveryEvent) -> Void]>([])
    let metrics: SyncMetrics

    /// - Parameter metricsFactory: where `beckon_sync_*` go; the process-wide factory
    ///   (`MetricsSystem.bootstrap`) if nil.
    public init(now: @escaping @Sendable () -> Date = { Date() }, metricsFactory: (any MetricsFactory)? = nil) {
        self.now = now
        self.metrics = SyncMetrics(factory: metricsFactory ?? MetricsSystem.factory)
    }

    // MARK: For the rest of the server

    /// The device's presence on this node; nil if it never connected since the start.
    public func presence(of device: DeviceRef) -> SyncPresence? { presenceByDevice[device] }

    /// Calls `observer` with every session event (connected, disconnected, acknowledged, read):
    /// the delivery planner's input. Observers must not block; they run on the hub.
    public nonisolated func observe(_ observer: @escaping @Sendable (DeliveryEvent) -> Void) {
        observers.withLockedValue { $0.append(observer) }
    }

    private func emit(_ event: DeliveryEvent) {
        for observer in observers.withLockedValue({ $0 }) { observer(event) }
    }

    /// How many sessions are live.
    public var sessionCount: Int { sessionsByDevice.count }

    /// Wakes the live sessions of these users: their mailboxes have new messages. Called after
    /// the append is durable, and only for messages that were not duplicates.
    public func messagesAppended(for users: some Sequence<UserRef>) {
        for user in users {
            for device in devicesByUser[user] ?? [] {
                sessionsByDevice[device]?.newMessages()
            }
        }
    }

    /// Closes the device's session with 4003: the device was deleted or re-registered.
    public func revoke(_ device: DeviceRef) {
        sessionsByDevice[device]?.close(.revoked, reason: "revoked", end: .revoked)
    }

    /// Closes every session with 1001 and refuses new ones; returns when all have ended.
    public func shutDown() async {
        shuttingDown = true
        for session in sessionsByDevice.values {
            session.close(.goingAway, reason: "server shutting down", end: .shutdown)
        }
        while !sessionsByDevice.isEmpty {
            await withCheckedContinuation { idleWaiters.append($0) }
        }
    }

    public nonisolated func run() async throws {
        // Wait for graceful shutdown (or cancellation), then close the sessions.
        try? await gracefulShutdown()
        await shutDown()
    }

    // MARK: For sessions

    /// Registers a new session; an earlier session of the same device is told to close with
    /// 4001. Returns false while the server is shutting down.
    func register(_ session: SyncSessionHandle) -> Bool {
        guard !shuttingDown else { return false }
        let ref = session.ref
        if let previous = sessionsByDevice[ref] {
            previous.close(.replaced, reason: "replaced by a newer session", end: .replaced)
            record(end: .replaced, of: ref)
            metrics.ended(.replaced)
            emit(.disconnected(ref, clean: false, at: now()))
        }
        sessionsByDevice[ref] = session
        metrics.opened.increment()
        metrics.sessions.record(sessionsByDevice.count)
        devicesByUser[session.user, default: []].insert(ref)
        presenceByDevice[ref, default: SyncPresence()].connectedSince = session.connectedAt
        emit(.connected(ref, at: session.connectedAt))
        return true
    }

    /// The session ended. Presence is updated only if it is still the device's current session
    /// (a replaced session's end was recorded when it was replaced).
    func unregister(_ session: SyncSessionHandle, end: SyncSessionEnd) {
        let ref = session.ref
        guard sessionsByDevice[ref] === session else { return }
        sessionsByDevice[ref] = nil
        devicesByUser[session.user]?.remove(ref)
        if devicesByUser[session.user]?.isEmpty == true { devicesByUser[session.user] = nil }
        record(end: end, of: ref)
        metrics.ended(end)
        metrics.sessions.record(sessionsByDevice.count)
        presenceByDevice[ref]?.connectedSince = nil
        emit(.disconnected(ref, clean: end == .clean, at: now()))
        if sessionsByDevice.isEmpty {
            let waiters = idleWaiters
            idleWaiters = []
            for waiter in waiters { waiter.resume() }
        }
    }

    func recordAck(_ device: DeviceRef, upTo sequence: Int64) {
        var presence = presenceByDevice[device, default: SyncPresence()]
        presence.lastAck = max(presence.lastAck ?? 0, sequence)
        presence.lastAckAt = now()
        presenceByDevice[device] = presence
        emit(.acknowledged(device, at: presence.lastAckAt ?? now()))
    }

    /// Tells the user's other live sessions that `ids` were read (design rule 7).
    func readElsewhere(user: UserRef, except device: DeviceRef, ids: [String], badge: Int) {
        emit(.read(user: user, by: device, ids: ids, at: now()))
        for other in devicesByUser[user] ?? [] where other != device {
            sessionsByDevice[other]?.readElsewhere(ids: ids, badge: badge)
        }
    }

    private func record(end: SyncSessionEnd, of device: DeviceRef) {
        presenceByDevice[device, default: SyncPresence()].lastEnd = end
        presenceByDevice[device, default: SyncPresence()].lastEndAt = now()
    }
}
