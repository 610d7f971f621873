/// The connection pool's decisions, as a value type with pure transitions.
///
/// It knows connections by id and requests by id, and answers every event with the actions the
/// driver (`APNSConnectionPool`) must take. No sockets, no clocks: every rule of the pool is
/// tested by feeding it events.
///
/// Rules (apns.md C):
/// - Several connections, each honouring its own `SETTINGS_MAX_CONCURRENT_STREAMS`, which APNs
///   changes at will (1 until a request with a valid token, then about 1000; 1 after a rejection).
/// - Requests go to the connection with the most free streams, spreading load as Apple asks.
/// - When no stream is free, requests wait in a bounded queue; a full queue refuses at once.
/// - A connection that received GOAWAY takes no new streams; it is replaced straight away.
/// - A connection that closed or failed to connect is replaced after a backoff.
public struct APNSPoolStateMachine: Sendable {
    public typealias ConnectionID = Int
    public typealias RequestID = Int

    public enum Action: Equatable, Sendable {
        case connect(ConnectionID)
        case execute(RequestID, on: ConnectionID)
        case fail(RequestID, APNSPoolFailure)
        /// Connect again after `attempt` consecutive failures (the driver turns it into a delay).
        case scheduleReconnect(attempt: Int)
        case close(ConnectionID)
    }

    enum ConnectionState: Equatable, Sendable {
        /// TCP/TLS/HTTP2 preface in progress; no SETTINGS from the server yet.
        case connecting
        case active(maxStreams: Int, inFlight: Int)
        /// GOAWAY received or retired by us: finishing its streams, taking no new ones.
        case draining(inFlight: Int)
    }

    public let targetConnections: Int
    public let maximumQueued: Int
    private(set) var connections: [ConnectionID: ConnectionState] = [:]
    private(set) var queue = RequestQueue()
    private var nextConnectionID = 0
    private var consecutiveFailures = 0
    private var reconnectScheduled = false
    private(set) var isShutDown = false

    public init(targetConnections: Int, maximumQueued: Int) {
        precondition(targetConnections > 0 && maximumQueued >= 0)
        self.targetConnections = targetConnections
        self.maximumQueued = maximumQueued
    }

    // MARK: Requests

    /// A new request wants a stream.
    public mutating func request(_ id: RequestID) -> [Action] {
        if isShutDown { return [.fail(id, .shutDown)] }
        if let connection = leastLoadedConnection() {
            startStream(on: connection)
            return [.execute(id, on: connection)]
        }
        guard queue.count < maximumQueued else { return [.fail(id, .queueFull)] }
        queue.append(id)
        return fillUp()
    }

    /// A queued request gave up (its deadline passed). Returns whether it was still queued.
    public mutating func cancelQueued(_ id: RequestID) -> Bool {
        queue.remove(id)
    }

    /// Streams ended, whatever their answers.
    public mutating func streamsClosed(_ count: Int = 1, on connection: ConnectionID) -> [Action] {
        switch connections[connection] {
        case .active(let maxStreams, let inFlight):
            connections[connection] = .active(maxStreams: maxStreams, inFlight: max(inFlight - count, 0))
            return dispatchQueued()
        case .draining(let inFlight):
            if inFlight <= count {
                connections[connection] = .draining(inFlight: 0)
                return [.close(connection)]
            }
            connections[connection] = .draining(inFlight: inFlight - count)
            return []
        case .connecting, nil:
            return []
        }
    }

    // MARK: Connections

    /// The server's SETTINGS arrived (the first one makes the connection usable).
    public mutating func settingsReceived(on connection: ConnectionID, maxStreams: Int) -> [Action] {
        switch connections[connection] {
        case .connecting:
            consecutiveFailures = 0
            connections[connection] = .active(maxStreams: maxStreams, inFlight: 0)
        case .active(_, let inFlight):
            connections[connection] = .active(maxStreams: maxStreams, inFlight: inFlight)
        case .draining, nil:
            return []
        }
        return dispatchQueued()
    }

    /// GOAWAY arrived, or the driver retires the connection (stream ids exhausted, a wedged token).
    public mutating func goingAway(_ connection: ConnectionID) -> [Action] {
        var actions: [Action] = []
        switch connections[connection] {
        case .active(_, let inFlight) where inFlight > 0:
            connections[connection] = .draining(inFlight: inFlight)
        case .active, .connecting:
            connections[connection] = .draining(inFlight: 0)
            actions.append(.close(connection))
        case .draining, nil:
            return []
        }
        // Replace it now: the server asked us to leave, it did not fail.
        actions += fillUp()
        return actions
    }

    /// The connection is gone (closed, reset, or never came up).
    public mutating func connectionClosed(_ connection: ConnectionID) -> [Action] {
        guard let state = connections.removeValue(forKey: connection) else { return [] }
        if case .connecting = state { consecutiveFailures += 1 }
        if case .draining = state { return fillUp() }
        return scheduleReconnectIfNeeded()
    }

    /// The backoff after failures elapsed.
    public mutating func reconnectDue() -> [Action] {
        reconnectScheduled = false
        return fillUp()
    }

    /// Stop: fail what waits, close every connection.
    public mutating func shutDown() -> [Action] {
        isShutDown = true
        var actions = queue.drain().map { Action.fail($0, .shutDown) }
        for id in connections.keys.sorted() { actions.append(.close(id)) }
        return actions
    }

    // MARK: Reading

    public var queuedCount: Int { queue.count }
    public var openConnections: Int { connections.count }
    public var inFlight: Int {
        connections.values.reduce(0) { total, state in
            switch state {
            case .active(_, let inFlight), .draining(let inFlight): total + inFlight
            case .connecting: total
            }
        }
    }

    // MARK: Internals

    private func leastLoadedConnection() -> ConnectionID? {
        var best: (id: ConnectionID, free: Int)?
        for (id, state) in connections {
            guard case .active(let maxStreams, let inFlight) = state else { continue }
            let free = maxStreams - inFlight
            if free > 0, free > (best?.free ?? 0) || (free == best?.free && id < best!.id) { best = (id, free) }
        }
        return best?.id
    }

    private mutating func startStream(on connection: ConnectionID) {
        guard case .active(let maxStreams, let inFlight) = connections[connection] else { return }
        connections[connection] = .active(maxStreams: maxStreams, inFlight: inFlight + 1)
    }

    private mutating func dispatchQueued() -> [Action] {
        var actions: [Action] = []
        while !queue.isEmpty, let connection = leastLoadedConnection() {
            startStream(on: connection)
            actions.append(.execute(queue.removeFirst(), on: connection))
        }
        return actions
    }

    /// Opens connections up to the target (only the ones not draining count).
    private mutating func fillUp() -> [Action] {
        guard !isShutDown, !reconnectScheduled else { return [] }
        let usable = connections.values.filter { if case .draining = $0 { false } else { true } }.count
        var actions: [Action] = []
        for _ in usable..<max(usable, targetConnections) {
            let id = nextConnectionID
            nextConnectionID += 1
            connections[id] = .connecting
            actions.append(.connect(id))
        }
        return actions
    }

    private mutating func scheduleReconnectIfNeeded() -> [Action] {
        guard !isShutDown else { return [] }
        if consecutiveFailures == 0 { return fillUp() }
        guard !reconnectScheduled else { return [] }
        reconnectScheduled = true
        return [.scheduleReconnect(attempt: consecutiveFailures)]
    }
}

/// Why the pool gave up on a request without sending it.
public enum APNSPoolFailure: Error, Hashable, Sendable {
    case queueFull
    case shutDown
}

/// A FIFO of request ids with O(1) removal of cancelled entries (they are skipped lazily).
struct RequestQueue: Sendable {
    private var items: [Int] = []
    private var head = 0
    private var cancelled: Set<Int> = []
    private var members: Set<Int> = []

    var count: Int { members.count }
    var isEmpty: Bool { members.isEmpty }

    mutating func append(_ id: Int) {
        items.append(id)
        members.insert(id)
    }

    mutating func remove(_ id: Int) -> Bool {
        guard members.remove(id) != nil else { return false }
        cancelled.insert(id)
        return true
    }

    mutating func removeFirst() -> Int {
        while true {
            let id = items[head]
            head += 1
            if head > 1024, head * 2 > items.count {
                items.removeFirst(head)
                head = 0
            }
            if cancelled.remove(id) == nil {
                members.remove(id)
                return id
            }
        }
    }

    mutating func drain() -> [Int] {
        var all: [Int] = []
        while !isEmpty { all.append(removeFirst()) }
        return all
    }
}
