import BeckonClient
import BeckonClientTestSupport
import BeckonJSON
import BeckonProtocol
import Foundation

/// A WebSocket whose server side the test plays: it reads what the client sent and sends frames
/// and closes by hand.
final class ScriptedTransport: SyncTransport, @unchecked Sendable {
    private let lock = NSLockBox()
    private var _connections: [ScriptedConnection] = []
    private var failuresLeft = 0
    private(set) var attempts = 0

    /// The next `count` connects fail.
    func failNext(_ count: Int) { lock.run { failuresLeft = count } }

    var connections: [ScriptedConnection] { lock.run { _connections } }
    var attemptCount: Int { lock.run { attempts } }

    func connect(to endpoint: SyncEndpoint) async throws -> any SyncTransportConnection {
        try lock.run {
            attempts += 1
            if failuresLeft > 0 {
                failuresLeft -= 1
                throw FakeFailure()
            }
            let connection = ScriptedConnection(endpoint: endpoint)
            _connections.append(connection)
            return connection
        }
    }

    /// Waits for connection number `index` (0-based).
    func connection(_ index: Int) async throws -> ScriptedConnection {
        try await eventually("connection \(index)") { connections.count > index }
        return connections[index]
    }
}

final class ScriptedConnection: SyncTransportConnection, @unchecked Sendable {
    let endpoint: SyncEndpoint
    let events: AsyncStream<SyncTransportEvent>
    private let continuation: AsyncStream<SyncTransportEvent>.Continuation
    private let lock = NSLockBox()
    private var _sent: [String] = []
    private var _closedByClient: UInt16?
    private var ended = false

    init(endpoint: SyncEndpoint) {
        self.endpoint = endpoint
        (events, continuation) = AsyncStream.makeStream(of: SyncTransportEvent.self)
    }

    var sent: [SyncClientFrame] { lock.run { _sent }.compactMap { try? SyncClientFrame.parse($0).get() } }
    var closedByClient: UInt16? { lock.run { _closedByClient } }

    func send(_ text: String) async throws {
        try lock.run {
            guard !ended else { throw FakeFailure() }
            _sent.append(text)
        }
    }

    func close(code: UInt16) async {
        // The server answers a close frame with its own: the socket ends with that code.
        let first = lock.run { () -> Bool in
            guard !ended else { return false }
            _closedByClient = code
            return true
        }
        if first { serverClose(code) }
    }

    // MARK: The server's side

    func server(_ frame: SyncServerFrame) { continuation.yield(.text(frame.text)) }

    func serverText(_ text: String) { continuation.yield(.text(text)) }

    func serverClose(_ code: UInt16?) {
        let first = lock.run { () -> Bool in
            defer { ended = true }
            return !ended
        }
        guard first else { return }
        continuation.yield(.closed(code: code))
        continuation.finish()
    }

    func welcome(lastSequence: Int64, badge: Int = 0, window: Int = 100) {
        server(.welcome(version: 2, sessionID: "s", lastSequence: lastSequence, window: window, badge: badge))
    }

    func message(_ sequence: Int64, id: String? = nil, kind: MessageKind = .message, read: Bool = false, text: String = "hi") {
        server(.message(SyncMessage(
            sequence: sequence, id: id ?? Self.id(sequence), kind: kind, payload: Array(#"{"text":"\#(text)"}"#.utf8),
            createdAt: Date(timeIntervalSince1970: 1_700_000_000), read: read)))
    }

    static func id(_ sequence: Int64) -> String {
        String(format: "00000000-0000-4000-8000-%012d", sequence)
    }

    /// Waits until the client has sent a frame matching `match`.
    func waitForSent(_ what: String = "a frame", _ match: @escaping (SyncClientFrame) -> Bool) async throws {
        try await eventually(what) { sent.contains(where: match) }
    }

    /// The highest ack sent.
    var lastAck: Int64? {
        sent.compactMap { if case .ack(let upTo) = $0 { upTo } else { nil } }.max()
    }
}
