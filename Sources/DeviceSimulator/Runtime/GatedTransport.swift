import BeckonClient
import BeckonProtocol

/// One process's WebSockets as the phone lets them live: none while the phone is offline or the
/// process is suspended or dead, and every open one dropped when that happens (the server sees a
/// close without `bye`: a drop). It also reads the frames going by, for the timeline: when a
/// session is welcomed or ends, and which messages the SDK acknowledged, i.e. stored.
final class GatedTransport: SyncTransport {
    let inner: any SyncTransport
    let role: String
    let device: String
    let timeline: Timeline
    let network: PhoneNetwork
    /// Virtual seconds each connect and each inbound frame takes (`IOSPolicy.networkLatencySeconds`).
    let latency: Double
    private let state = Locked<(running: Bool, connections: [GatedConnection])>((true, []))

    init(inner: any SyncTransport, role: String, device: String, timeline: Timeline, network: PhoneNetwork, latency: Double) {
        self.inner = inner
        self.latency = latency
        self.role = role
        self.device = device
        self.timeline = timeline
        self.network = network
        network.attach(self)
    }

    var isRunning: Bool { state.withLock { $0.running } }

    func connect(to endpoint: SyncEndpoint) async throws -> any SyncTransportConnection {
        guard isRunning, network.isOnline else { throw PhoneUnreachable() }
        if latency > 0 { try await timeline.clock.sleep(for: .seconds(latency)) }
        let connection = GatedConnection(inner: try await inner.connect(to: endpoint), owner: self)
        let admitted = state.withLock { state -> Bool in
            guard state.running else { return false }
            state.connections.append(connection)
            return true
        }
        if !admitted || !network.isOnline { connection.drop() }
        return connection
    }

    /// The process is frozen or gone: no more sockets until `resume`.
    func stop() {
        state.withLock { $0.running = false }
        dropAll()
    }

    func resume() { state.withLock { $0.running = true } }

    func dropAll() {
        let connections = state.withLock { state in
            defer { state.connections.removeAll() }
            return state.connections
        }
        for connection in connections {
            connection.drop()
        }
    }

    func forget(_ connection: GatedConnection) {
        state.withLock { $0.connections.removeAll { $0 === connection } }
    }
}

/// One socket through the gate.
final class GatedConnection: SyncTransportConnection {
    private struct State {
        var ended = false
        /// Messages received and not yet acknowledged, by sequence.
        var unacknowledged: [(sequence: Int64, id: String)] = []
    }

    let events: AsyncStream<SyncTransportEvent>
    private let continuation: AsyncStream<SyncTransportEvent>.Continuation
    private let inner: any SyncTransportConnection
    private let owner: GatedTransport
    private let role: String
    private let device: String
    private let timeline: Timeline
    private let state = Locked(State())

    init(inner: any SyncTransportConnection, owner: GatedTransport) {
        self.inner = inner
        self.owner = owner
        self.role = owner.role
        self.device = owner.device
        self.timeline = owner.timeline
        (events, continuation) = AsyncStream.makeStream(of: SyncTransportEvent.self)
        Task { [self] in
            for await event in inner.events {
                switch event {
                case .text(let text):
                    if owner.latency > 0 { try? await owner.timeline.clock.sleep(for: .seconds(owner.latency)) }
                    observe(text)
                    guard !state.withLock({ $0.ended }) else { continue }
                    continuation.yield(event)
                case .closed(let code):
                    end(code: code.map(Int.init))
                }
            }
        }
    }

    func send(_ text: String) async throws {
        guard !state.withLock({ $0.ended }) else { throw PhoneUnreachable() }
        if case .success(.ack(let upTo)) = SyncClientFrame.parse(text) {
            let stored = state.withLock { state -> [String] in
                let stored = state.unacknowledged.filter { $0.sequence <= upTo }.map(\.id)
                state.unacknowledged.removeAll { $0.sequence <= upTo }
                return stored
            }
            for id in stored { timeline.record(device, .messageStored(id: id)) }
        }
        try await inner.send(text)
    }

    func close(code: UInt16) async { await inner.close(code: code) }

    /// The network or the process went away under the socket.
    func drop() {
        guard end(code: nil) else { return }
        Task { await inner.close(code: 1001) }
    }

    private func observe(_ text: String) {
        switch SyncServerFrame.parse(text) {
        case .success(.welcome): timeline.record(device, .syncConnected(role: role))
        case .success(.message(let message)):
            state.withLock { $0.unacknowledged.append((message.sequence, message.id)) }
        default: break
        }
    }

    /// Ends the stream once; returns whether this call did.
    @discardableResult
    private func end(code: Int?) -> Bool {
        let first = state.withLock { state in
            defer { state.ended = true }
            return !state.ended
        }
        guard first else { return false }
        timeline.record(device, .syncDisconnected(role: role, code: code))
        continuation.yield(.closed(code: code.map { UInt16($0) }))
        continuation.finish()
        owner.forget(self)
        return true
    }
}
