import BeckonDelivery
import BeckonProtocol
import BeckonStore
import Foundation
import Logging
import Metrics
import ServiceLifecycle
import NIOConcurrencyHelpers

/// The live sync sessions of this server process, by device and by user, and the devices'
/// presence. One per process; `POST /v1/messages` tells it about new messages after they are
/// durable, and it wakes the sessions of their users with the new entry, which they send if it is
/// the next one or else read from the store (the hub keeps no message).
///
/// As a `Service` it closes every session with 1001 when graceful shutdown starts (run it after
/// the HTTP application in a `ServiceGroup` so it is shut down first, which is what
/// `BeckonHTTPServer.application` does).
public actor SyncHub: Service {
    /// Each device's live sessions, one per role.
    private var sessionsByDevice: [DeviceRef: DeviceSessions] = [:]
    /// Sessions upgraded but without a role yet (no `hello`): shutdown and revocation reach
    /// them too.
    private var admitted: [ObjectIdentifier: SyncSessionHandle] = [:]
    private var devicesByUser: [UserRef: Set<DeviceRef>] = [:]
    private var presenceByDevice: [DeviceRef: SyncPresence] = [:]
    private var shuttingDown = false
    private var idleWaiters: [CheckedContinuation<Void, Never>] = []
    private let now: @Sendable () -> Date
    private let observers = NIOLockedValueBox<[@Sendable (DeliveryEvent) -> Void]>([])
    let metrics: SyncMetrics
    /// The other nodes, when there are (several nodes on PostgreSQL); nil for one node.
    let cluster: (any ClusterLink)?
    /// How many nodes share the rate limits (1 without a cluster).
    public nonisolated let share: NodeShare
    /// Each registered session's claim of its slot in the cluster, until it ends: true if the
    /// claim was accepted. Its end waits for it, so a slot is never released before it is taken.
    private var claims: [String: Task<Bool, Never>] = [:]

    /// - Parameters:
    ///   - metricsFactory: where `beckon_sync_*` go; the process-wide factory
    ///     (`MetricsSystem.bootstrap`) if nil.
    ///   - cluster: the other nodes, with several nodes on one database.
    public init(
        now: @escaping @Sendable () -> Date = { Date() }, metricsFactory: (any MetricsFactory)? = nil,
        cluster: (any ClusterLink)? = nil, share: NodeShare = NodeShare()
    ) {
        self.now = now
        self.metrics = SyncMetrics(factory: metricsFactory ?? MetricsSystem.factory)
        self.cluster = cluster
        self.share = share
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

    /// Whether a session of the device is open on this node (claimed or still claiming).
    public func holdsSession(of device: DeviceRef) -> Bool { sessionsByDevice[device] != nil }
    /// How many sessions are live (a device's app and extension sessions count apart).
    public var sessionCount: Int { sessionsByDevice.values.reduce(0) { $0 + $1.count } }

    /// Wakes the live sessions of the message's recipients, here and on the other nodes, and
    /// hands the sessions here their entry: a session that is up to date sends it without reading
    /// the store, a read that was most of the live path's post-to-frame time under load
    /// (docs/benchmarks-history.md, "The live path without a read"). Called after the append is durable, and
    /// only for a message that was not a duplicate.
    public func messageAppended(_ message: Message, at positions: [MailboxPosition]) {
        // A fan-out to many users with no session here (a burst) builds no entries.
        for position in positions {
            let user = UserRef(appID: message.appID, userID: position.userID)
            guard devicesByUser[user] != nil else { continue }
            wake(user, offering: MailboxEntry(userID: position.userID, sequence: position.sequence, message: message))
        }
        // The other nodes are told only which mailboxes changed; their sessions read the store.
        guard let cluster else { return }
        let users = positions.map(\.userID)
        cluster.publish(
            users.count > ClusterHint.mostNamedUsers
                ? .mailboxAll(app: message.appID) : .mailbox(app: message.appID, users: users))
    }

    private func wake(_ users: [UserRef]) {
        for user in users { wake(user, offering: nil) }
    }

    private func wake(_ user: UserRef, offering entry: MailboxEntry?) {
        for device in devicesByUser[user] ?? [] {
            for session in sessionsByDevice[device]?.all ?? [] { session.newMessages(entry) }
        }
    }

    /// Wakes the live sessions here of users whose mailboxes changed through another node.
    func messagesAppendedElsewhere(for users: [UserRef]) { wake(users) }

    /// Wakes every live session here (of one app, or all): a hint may have been lost.
    func wakeAll(appID: String? = nil) {
        for (device, sessions) in sessionsByDevice where appID == nil || device.appID == appID {
            for session in sessions.all { session.newMessages() }
        }
    }

    /// Tells the users' live sessions, here and on the other nodes, that a call ended: their
    /// apps end the CallKit call (rule 6).
    public func callEnded(for users: [UserRef], callID: String, outcome: CallEndOutcome) {
        endCall(for: users, callID: callID, outcome: outcome)
        for (app, ofApp) in Dictionary(grouping: users, by: \.appID) {
            cluster?.publish(.callEnded(app: app, users: ofApp.map(\.userID), callID: callID, outcome: outcome))
        }
    }

    private func endCall(for users: [UserRef], callID: String, outcome: CallEndOutcome) {
        for user in users {
            for device in devicesByUser[user] ?? [] {
                for session in sessionsByDevice[device]?.all ?? [] {
                    session.callEnded(callID: callID, outcome: outcome)
                }
            }
        }
    }

    /// Closes the device's sessions with 4003, here and on the other nodes: the device was
    /// deleted or re-registered.
    public func revoke(_ device: DeviceRef) {
        closeRevoked(device)
        cluster?.publish(.revoke(app: device.appID, device: device.deviceID, at: Int64((now().timeIntervalSince1970 * 1000).rounded(.down))))
    }

    private func closeRevoked(_ device: DeviceRef, connectedBefore: Date? = nil) {
        let waiting = admitted.values.filter { $0.ref == device }
        for session in Array(sessionsByDevice[device]?.all ?? []) + waiting
        where connectedBefore.map({ session.connectedAt < $0 }) ?? true {
            session.close(.revoked, reason: "revoked", end: .revoked)
        }
    }

    /// What another node told this one (`ClusterHint`): acted on here only.
    func received(_ hint: ClusterHint) {
        switch hint {
        case .mailbox(let app, let users):
            wake(users.map { UserRef(appID: app, userID: $0) })
        case .mailboxAll(let app):
            wakeAll(appID: app)
        case .callEnded(let app, let users, let callID, let outcome):
            endCall(for: users.map { UserRef(appID: app, userID: $0) }, callID: callID, outcome: outcome)
        case .read(let app, let user, let device, let ids, let badge):
            tellOthersRead(UserRef(appID: app, userID: user), except: DeviceRef(appID: app, deviceID: device), ids: ids, badge: badge)
        case .revoke(let app, let device, let at):
            closeRevoked(DeviceRef(appID: app, deviceID: device), connectedBefore: Date(timeIntervalSince1970: Double(at) / 1000))
        case .close(let node, let app, let device, let session, let code):
            guard node == cluster?.nodeID else { return }
            closeDisplaced(DeviceRef(appID: app, deviceID: device), session: session, code: SyncCloseCode(rawValue: code) ?? .replaced)
        }
    }

    /// Closes every live session with 1001 (clients reconnect): this node lost its place in the
    /// cluster (other nodes took it for dead and ended its sessions for the planner).
    func closeAllForRejoin() {
        for session in sessionsByDevice.values.flatMap(\.all) + admitted.values {
            session.close(.goingAway, reason: "node rejoining the cluster", end: .shutdown)
        }
    }

    /// Closes every session with 1001 and refuses new ones; returns when all have ended.
    public func shutDown() async {
        shuttingDown = true
        for session in sessionsByDevice.values.flatMap(\.all) + admitted.values {
            session.close(.goingAway, reason: "server shutting down", end: .shutdown)
        }
        while !sessionsByDevice.isEmpty || !admitted.isEmpty {
            await withCheckedContinuation { idleWaiters.append($0) }
        }
    }

    public nonisolated func run() async throws {
        // Wait for graceful shutdown (or cancellation), then close the sessions.
        try? await gracefulShutdown()
        await shutDown()
    }

    // MARK: For sessions

    /// A session was upgraded: known from now on, without a role until its `hello`. False while
    /// the server shuts down.
    func admit(_ session: SyncSessionHandle) -> Bool {
        guard !shuttingDown else { return false }
        admitted[ObjectIdentifier(session)] = session
        return true
    }

    /// Registers a session under the role its `hello` named (docs/design.md, "Sync roles"):
    ///
    /// - an `app` session replaces an earlier app session of the device (4001) and preempts its
    ///   extension session (4002): the main app has priority over its extension;
    /// - an `extension` session replaces an earlier extension session (4001), and is refused
    ///   (4002) while the app's session is live: an extension never evicts the app.
    ///
    /// The device counts as connected (presence, the planner's `connected`) from its first
    /// session to the end of its last.
    func register(_ session: SyncSessionHandle, role: SyncRole) -> SyncRegistration {
        guard !shuttingDown else { return .refused(.goingAway, reason: "server shutting down", end: .shutdown) }
        let ref = session.ref
        admitted[ObjectIdentifier(session)] = nil
        var sessions = sessionsByDevice[ref] ?? DeviceSessions()
        if role == .extension, sessions[.app] != nil {
            return .refused(.preempted, reason: "preempted: the app holds the device's session", end: .preempted)
        }
        let wasConnected = !sessions.isEmpty
        var takenOver: SyncSessionEnd?
        if let previous = sessions[role] {
            previous.close(.replaced, reason: "replaced: a newer session took over", end: .replaced)
            metrics.ended(.replaced)
            takenOver = .replaced
        }
        if role == .app, let extensionSession = sessions[.extension] {
            extensionSession.close(.preempted, reason: "preempted: the app took over", end: .preempted)
            sessions[.extension] = nil
            metrics.ended(.preempted)
            takenOver = takenOver ?? .preempted
        }
        if let takenOver { record(end: takenOver, of: ref) }
        session.role = role
        sessions[role] = session
        sessionsByDevice[ref] = sessions
        metrics.opened.increment()
        metrics.sessions.record(sessionCount)
        devicesByUser[session.user, default: []].insert(ref)
        presenceByDevice[ref, default: SyncPresence()].connectedSince = session.connectedAt
        if let cluster {
            // The planner hears of it once the slot is taken cluster-wide: whoever then asks
            // whether the device is connected (a late `disconnected` of a replaced session on
            // another node) finds this session.
            let claim = ClusterSession(
                device: ref, role: role, userID: session.user.userID, node: cluster.nodeID, session: session.id)
            claims[session.id] = Task {
                let result = await cluster.claim(claim, at: session.connectedAt)
                self.claimed(session, role: role, result: result, wasConnected: wasConnected)
                return result.accepted
            }
            return .accepted
        }
        // A session taking over from another is a drop and a connection to the planner: the
        // messages the old one had unacknowledged are the new one's to fetch.
        if wasConnected { emit(.disconnected(ref, clean: false, at: now())) }
        emit(.connected(ref, role: role, at: session.connectedAt))
        return .accepted
    }

    /// The cluster decided a new session's claim: sessions it displaced are closed where they
    /// are, and the planner hears of the connection (or the session is refused: the device's app
    /// holds it on another node).
    private func claimed(_ session: SyncSessionHandle, role: SyncRole, result: SessionClaimResult, wasConnected: Bool) {
        for displaced in result.displaced {
            let code: SyncCloseCode = displaced.role == role ? .replaced : .preempted
            if displaced.node == cluster?.nodeID {
                closeDisplaced(displaced.device, session: displaced.session, code: code)
            } else {
                cluster?.publish(.close(
                    node: displaced.node, app: displaced.device.appID, device: displaced.device.deviceID,
                    session: displaced.session, code: code.rawValue))
            }
        }
        guard result.accepted else {
            session.close(.preempted, reason: "preempted: the app holds the device's session", end: .preempted)
            return
        }
        if wasConnected || !result.displaced.isEmpty { emit(.disconnected(session.ref, clean: false, at: now())) }
        emit(.connected(session.ref, role: role, at: session.connectedAt))
    }

    /// Closes the session `id` of the device if it is live here: a newer one took its slot.
    private func closeDisplaced(_ device: DeviceRef, session id: String, code: SyncCloseCode) {
        guard let session = sessionsByDevice[device]?.all.first(where: { $0.id == id }) else { return }
        if code == .preempted {
            session.close(.preempted, reason: "preempted: the app took over", end: .preempted)
        } else {
            session.close(.replaced, reason: "replaced: a newer session took over", end: .replaced)
        }
    }

    /// The session ended. Presence is updated only if it is still one of the device's current
    /// sessions (a replaced or preempted session's end was recorded when it was taken over).
    func unregister(_ session: SyncSessionHandle, end: SyncSessionEnd) {
        let ref = session.ref
        if admitted.removeValue(forKey: ObjectIdentifier(session)) != nil { resumeIdleWaitersIfIdle() }
        let claim = claims.removeValue(forKey: session.id)
        guard let role = session.role, var sessions = sessionsByDevice[ref], sessions[role] === session else { return }
        sessions[role] = nil
        sessionsByDevice[ref] = sessions.isEmpty ? nil : sessions
        metrics.ended(end)
        metrics.sessions.record(sessionCount)
        if sessions.isEmpty {
            devicesByUser[session.user]?.remove(ref)
            if devicesByUser[session.user]?.isEmpty == true { devicesByUser[session.user] = nil }
            record(end: end, of: ref)
            presenceByDevice[ref]?.connectedSince = nil
        }
        if let cluster, let claim {
            // After the claim (never release a slot before it is taken); the planner checks
            // that no newer session holds the device before taking this for a drop.
            let (lastHere, clean, at) = (sessions.isEmpty, end == .clean, now())
            Task {
                guard await claim.value else { return }
                await cluster.release(ref, session: session.id)
                if lastHere { await self.emit(.disconnected(ref, clean: clean, at: at, session: session.id)) }
            }
        } else if sessions.isEmpty {
            emit(.disconnected(ref, clean: end == .clean, at: now()))
        }
        resumeIdleWaitersIfIdle()
    }

    private func resumeIdleWaitersIfIdle() {
        guard sessionsByDevice.isEmpty, admitted.isEmpty else { return }
        let waiters = idleWaiters
        idleWaiters = []
        for waiter in waiters { waiter.resume() }
    }

    func recordAck(_ device: DeviceRef, upTo sequence: Int64) {
        var presence = presenceByDevice[device, default: SyncPresence()]
        presence.lastAck = max(presence.lastAck ?? 0, sequence)
        presence.lastAckAt = now()
        presenceByDevice[device] = presence
        emit(.acknowledged(device, at: presence.lastAckAt ?? now()))
    }

    /// Tells the user's other live sessions, here and on the other nodes, that `ids` were read
    /// (design rule 7).
    func readElsewhere(user: UserRef, except device: DeviceRef, ids: [String], badge: Int) {
        emit(.read(user: user, by: device, ids: ids, at: now()))
        tellOthersRead(user, except: device, ids: ids, badge: badge)
        cluster?.publish(.read(app: user.appID, user: user.userID, device: device.deviceID, ids: ids, badge: badge))
    }

    private func tellOthersRead(_ user: UserRef, except device: DeviceRef, ids: [String], badge: Int) {
        for other in devicesByUser[user] ?? [] where other != device {
            for session in sessionsByDevice[other]?.all ?? [] { session.readElsewhere(ids: ids, badge: badge) }
        }
    }

    private func record(end: SyncSessionEnd, of device: DeviceRef) {
        presenceByDevice[device, default: SyncPresence()].lastEnd = end
        presenceByDevice[device, default: SyncPresence()].lastEndAt = now()
    }
}

/// One node: a device is connected if this node has seen a session of it since it started (a
/// planner saved as connected before a restart is not), and a session's end is always a drop
/// for the planner (a newer session here was registered after it, in order). Its one planner
/// hears of each connection in order with everything after it, so none is ever ahead of it.
extension SyncHub: DevicePresence {
    public func mayBeConnected(_ device: DeviceRef) -> Bool { presenceByDevice[device] != nil }
    public func connectedElsewhere(_ device: DeviceRef, besides session: String) -> Bool { false }
    public nonisolated func liveSessions(_ devices: [DeviceRef]) -> [DeviceRef: LiveSession] { [:] }
}
