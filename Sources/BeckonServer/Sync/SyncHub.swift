import BeckonStore
import Foundation
import ServiceLifecycle
import Synchronization

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

/// One live session as the hub sees it: a handle to post events into its connection's loop.
/// The loop (`SyncConnection`) owns the state machine; the handle only queues events.
final class SyncSessionHandle: Sendable {
    enum Event: Sendable {
        case frame(String)
        case invalidFrame(SyncProtocolViolation)
        case newMessages
        case readElsewhere(ids: [String], badge: Int)
        case close(SyncCloseCode, reason: String, end: SyncSessionEnd)
        case inboundEnded
    }

    let id: String
    let device: Device
    let connectedAt: Date
    private let continuation: AsyncStream<Event>.Continuation
    /// Coalesces wake-ups: one `newMessages` waits in the queue at most.
    private let wakeQueued = Mutex(false)
    /// Frames read from the socket and not yet processed (4029 past the limit).
    private let framesQueued = Mutex(0)

    init(id: String, device: Device, connectedAt: Date, continuation: AsyncStream<Event>.Continuation) {
        self.id = id
        self.device = device
        self.connectedAt = connectedAt
        self.continuation = continuation
    }

    func newMessages() {
        let alreadyQueued = wakeQueued.withLock { queued in
            defer { queued = true }
            return queued
        }
        if !alreadyQueued { continuation.yield(.newMessages) }
    }

    /// Called by the loop when it takes `newMessages` from the queue.
    func tookNewMessages() { wakeQueued.withLock { $0 = false } }

    func readElsewhere(ids: [String], badge: Int) { continuation.yield(.readElsewhere(ids: ids, badge: badge)) }

    func close(_ code: SyncCloseCode, reason: String, end: SyncSessionEnd) {
        continuation.yield(.close(code, reason: reason, end: end))
    }

    /// Queues a frame from the device; false if more than `limit` are already waiting.
    func frameArrived(_ text: String, limit: Int) -> Bool {
        let accepted = framesQueued.withLock { count in
            guard count < limit else { return false }
            count += 1
            return true
        }
        if accepted { continuation.yield(.frame(text)) }
        return accepted
    }

    func tookFrame() { framesQueued.withLock { $0 -= 1 } }

    func invalidFrame(_ violation: SyncProtocolViolation) { continuation.yield(.invalidFrame(violation)) }

    func inboundEnded() { continuation.yield(.inboundEnded) }
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

    public init(now: @escaping @Sendable () -> Date = { Date() }) {
        self.now = now
    }

    // MARK: For the rest of the server

    /// The device's presence on this node; nil if it never connected since the start.
    public func presence(of device: DeviceRef) -> SyncPresence? { presenceByDevice[device] }

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
        let ref = session.device.ref
        if let previous = sessionsByDevice[ref] {
            previous.close(.replaced, reason: "replaced by a newer session", end: .replaced)
            record(end: .replaced, of: ref)
        }
        sessionsByDevice[ref] = session
        devicesByUser[session.device.user, default: []].insert(ref)
        presenceByDevice[ref, default: SyncPresence()].connectedSince = session.connectedAt
        return true
    }

    /// The session ended. Presence is updated only if it is still the device's current session
    /// (a replaced session's end was recorded when it was replaced).
    func unregister(_ session: SyncSessionHandle, end: SyncSessionEnd) {
        let ref = session.device.ref
        guard sessionsByDevice[ref] === session else { return }
        sessionsByDevice[ref] = nil
        devicesByUser[session.device.user]?.remove(ref)
        if devicesByUser[session.device.user]?.isEmpty == true { devicesByUser[session.device.user] = nil }
        record(end: end, of: ref)
        presenceByDevice[ref]?.connectedSince = nil
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
    }

    /// Tells the user's other live sessions that `ids` were read (design rule 7).
    func readElsewhere(user: UserRef, except device: DeviceRef, ids: [String], badge: Int) {
        for other in devicesByUser[user] ?? [] where other != device {
            sessionsByDevice[other]?.readElsewhere(ids: ids, badge: badge)
        }
    }

    private func record(end: SyncSessionEnd, of device: DeviceRef) {
        presenceByDevice[device, default: SyncPresence()].lastEnd = end
        presenceByDevice[device, default: SyncPresence()].lastEndAt = now()
    }
}
