import BeckonDelivery
import BeckonJSON
import BeckonStore
import Foundation
import Logging
import Metrics
import NIOConcurrencyHelpers
import ServiceLifecycle

/// This node's part in a cluster of Beckon nodes on one PostgreSQL database (docs/cluster.md).
///
/// - Hints: what the hub publishes is gathered for `hintDelay` and sent as one NOTIFY, after the
///   commit it is about and outside any transaction; what other nodes send is handed to the hub.
///   A hint is a wake-up only: sessions read the mailbox by cursor, so a lost one costs latency.
/// - Catching up: every `pollInterval`, the users of this node's sessions whose mailbox changed
///   lately are woken (a hint lost with a node that died after its commit, or while this node's
///   listening connection was down; every session is woken when it comes back).
/// - Sessions: each one's slot is claimed in `sync_session`, so a newer session on any node
///   replaces an older one anywhere, and every node's planner sees where devices are.
/// - Liveness: a heartbeat every `heartbeat`; nodes silent for `nodeTimeout` are taken for dead
///   and their sessions ended for the planner (once, by whichever node reaps them), so their
///   devices' reconnect windows and re-pushes run on the living.
/// - Limits: the number of live nodes is each node's divisor of the rate limits (`NodeShare`).
public final class PostgresCluster: ClusterLink, DevicePresence, Service, Sendable {
    public let nodeID: String
    let store: PostgresStore
    public let share: NodeShare
    let heartbeat: Duration
    let nodeTimeout: TimeInterval
    let pollInterval: TimeInterval
    let hintDelay: Duration
    let logger: Logger
    static let channel = "beckon_cluster"

    private let hub = NIOLockedValueBox<SyncHub?>(nil)
    private let events = NIOLockedValueBox<DeliveryEventSink>(.none)
    private let outgoing = NIOLockedValueBox(Outgoing())
    private let wakeSender: AsyncStream<Void>.Continuation
    private let senderWakes: AsyncStream<Void>
    private let hintsSent: Counter
    private let hintsReceived: Counter
    private let hintsDropped: Counter
    private let reaped: Counter

    private struct Outgoing {
        var hints: [ClusterHint] = []
        var scheduled = false
    }

    public init(store: PostgresStore, configuration: ClusterConfiguration, share: NodeShare, logger: Logger) {
        let host = ProcessInfo.processInfo.hostName.prefix(32)
        self.nodeID = "\(host)-\(ProcessInfo.processInfo.processIdentifier)-\(UUID().uuidString.prefix(8).lowercased())"
        self.store = store
        self.share = share
        self.heartbeat = .seconds(configuration.heartbeatSeconds)
        self.nodeTimeout = TimeInterval(configuration.nodeTimeoutSeconds)
        self.pollInterval = TimeInterval(configuration.pollSeconds)
        self.hintDelay = .milliseconds(configuration.hintDelayMilliseconds)
        self.logger = logger
        (senderWakes, wakeSender) = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .bufferingNewest(1))
        hintsSent = Counter(label: "beckon_cluster_hints_total", dimensions: [("direction", "sent")])
        hintsReceived = Counter(label: "beckon_cluster_hints_total", dimensions: [("direction", "received")])
        hintsDropped = Counter(label: "beckon_cluster_hints_total", dimensions: [("direction", "dropped")])
        reaped = Counter(label: "beckon_cluster_reaped_sessions_total")
    }

    /// Joins the cluster (the node's row), before the node accepts a session: a session whose
    /// node has no row is taken for a dead node's.
    public func join() async throws {
        _ = try await store.heartbeat(node: nodeID)
        logger.notice("joined the cluster", metadata: ["node": "\(nodeID)"])
    }

    /// The hub whose sessions this node holds and where the planner's session events go.
    public func bind(hub: SyncHub, events: DeliveryEventSink) {
        self.hub.withLockedValue { $0 = hub }
        self.events.withLockedValue { $0 = events }
    }

    // MARK: ClusterLink

    public func publish(_ hint: ClusterHint) {
        let start = outgoing.withLockedValue { outgoing in
            outgoing.hints.append(hint)
            defer { outgoing.scheduled = true }
            return !outgoing.scheduled
        }
        if start { wakeSender.yield() }
    }

    public func claim(_ session: ClusterSession, at date: Date) async -> SessionClaimResult {
        do {
            return try await store.claimSession(session, at: date)
        } catch {
            // Without the database the session cannot be known cluster-wide; accepted here
            // alone, it still gets its messages (the mailbox is read by cursor) and the planner
            // hears of it. A newer session elsewhere may not close it: it ends on its own.
            logger.error("claiming a session slot failed", metadata: ["device": "\(session.device)", "error": "\(error)"])
            return SessionClaimResult(accepted: true, displaced: [])
        }
    }

    public func release(_ device: DeviceRef, session: String) async {
        do {
            try await store.releaseSession(device, session: session)
        } catch {
            // The row stays until this node is reaped or the device connects again.
            logger.error("releasing a session slot failed", metadata: ["device": "\(device)", "error": "\(error)"])
        }
    }

    // MARK: DevicePresence

    public func mayBeConnected(_ device: DeviceRef) async -> Bool {
        // A session here answers without the database (the planner asks for every message to a
        // connected device).
        if let hub = hub.withLockedValue({ $0 }), await hub.holdsSession(of: device) { return true }
        // Unknown (no database) counts as connected: the caller would otherwise push a device
        // that may be connected; its drop is planned when it is known.
        return (try? await store.hasSession(device)) ?? true
    }

    public func connectedElsewhere(_ device: DeviceRef, besides session: String) async -> Bool {
        (try? await store.hasSession(device, besides: session)) ?? false
    }

    public func liveSessions(_ devices: [DeviceRef]) async -> [DeviceRef: LiveSession] {
        // Claimed ones only: a session of this node still claiming may be refused, and then no
        // drop follows. Unknown (no database) is none: the device's own `connected` still comes.
        let sessions = (try? await store.liveSessions(devices)) ?? [:]
        return sessions.mapValues { LiveSession(role: $0.role, since: $0.connectedAt) }
    }

    // MARK: Running

    public func run() async throws {
        await withTaskGroup(of: Void.self) { group in
            group.addTask { await self.sendHints() }
            group.addTask { await self.listen() }
            group.addTask { await self.keepAlive() }
            group.addTask { await self.catchUp() }
            try? await gracefulShutdown()
            group.cancelAll()
        }
        do {
            try await store.removeNode(nodeID)
            logger.notice("left the cluster", metadata: ["node": "\(nodeID)"])
        } catch {
            logger.error("leaving the cluster failed; other nodes will reap this node", metadata: ["error": "\(error)"])
        }
    }

    /// Gathers hints for `hintDelay`, then sends them, as few NOTIFYs as fit.
    private func sendHints() async {
        for await _ in senderWakes {
            try? await Task.sleep(for: hintDelay)
            let hints = outgoing.withLockedValue { outgoing in
                defer { outgoing = Outgoing() }
                return outgoing.hints
            }
            var dropped = 0
            for payload in ClusterHintBatch.payloads(from: nodeID, hints, dropped: &dropped) {
                do {
                    try await store.notify(channel: Self.channel, payload: payload)
                } catch {
                    dropped += 1
                    logger.error("sending a hint failed", metadata: ["error": "\(error)"])
                }
            }
            hintsSent.increment(by: hints.count)
            if dropped > 0 { hintsDropped.increment(by: dropped) }
        }
    }

    /// Listens for other nodes' hints; after a break, wakes every session (hints were missed).
    private func listen() async {
        let listenedBefore = NIOLockedValueBox(false)
        while !Task.isCancelled {
            do {
                try await store.listen(channel: Self.channel) {
                    if listenedBefore.withLockedValue({ $0 }) { await self.hub.withLockedValue { $0 }?.wakeAll() }
                    listenedBefore.withLockedValue { $0 = true }
                } receive: { payload in
                    await self.receive(payload)
                }
            } catch {
                if Task.isCancelled { return }
                logger.error("listening for hints failed; retrying", metadata: ["error": "\(error)"])
            }
            try? await Task.sleep(for: .seconds(1))
        }
    }

    func receive(_ payload: String) async {
        guard let batch = try? JSONValueDecoder().decode(ClusterHintBatch.self, from: payload.utf8) else {
            logger.warning("an unreadable hint was ignored")
            return
        }
        guard batch.from != nodeID, let hub = hub.withLockedValue({ $0 }) else { return }
        hintsReceived.increment(by: batch.hints.count)
        for hint in batch.hints { await hub.received(hint) }
    }

    /// Heartbeats, the live node count, and reaping the dead.
    private func keepAlive() async {
        while !Task.isCancelled {
            do {
                if try await !store.heartbeat(node: nodeID) {
                    // Taken for dead (its sessions' ends were planned elsewhere): start over.
                    logger.error("this node was taken for dead by the cluster; closing its sessions so they reconnect")
                    await hub.withLockedValue { $0 }?.closeAllForRejoin()
                }
                let now = Date()
                share.update(liveNodes: try await store.liveNodeCount(since: now.addingTimeInterval(-nodeTimeout)))
                let sessions = try await store.reapDeadNodes(heartbeatBefore: now.addingTimeInterval(-nodeTimeout))
                if !sessions.isEmpty {
                    reaped.increment(by: sessions.count)
                    logger.notice("sessions of dead nodes ended", metadata: [
                        "sessions": "\(sessions.count)", "nodes": "\(Set(sessions.map(\.node)).sorted())",
                    ])
                    let sink = events.withLockedValue { $0 }
                    for session in sessions {
                        sink.submit(.disconnected(session.device, clean: false, at: now, session: session.session))
                    }
                }
            } catch is CancellationError {
                return
            } catch {
                logger.error("cluster heartbeat failed", metadata: ["error": "\(error)"])
            }
            try? await Task.sleep(for: heartbeat)
        }
    }

    /// The polling fallback for lost hints: users of this node's sessions whose mailbox changed
    /// since the last look (with one interval of overlap, for commits that took their time).
    private func catchUp() async {
        var since = Date()
        while !Task.isCancelled {
            try? await Task.sleep(for: .seconds(pollInterval))
            let now = Date()
            do {
                let users = try await store.changedUsers(onNode: nodeID, since: since.addingTimeInterval(-pollInterval))
                if !users.isEmpty { await hub.withLockedValue { $0 }?.messagesAppendedElsewhere(for: users) }
                since = now
            } catch is CancellationError {
                return
            } catch {
                logger.error("looking for missed hints failed", metadata: ["error": "\(error)"])
            }
        }
    }
}
