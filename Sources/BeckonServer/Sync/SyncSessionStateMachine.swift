import BeckonProtocol
import BeckonStore

/// How a session ended, as presence records it.
public enum SyncSessionEnd: String, Sendable, Codable, CaseIterable {
    /// The device said `bye`.
    case clean
    /// The connection ended without `bye`: a network drop, the app killed or suspended, or a
    /// bare WebSocket close frame (the server cannot tell those apart reliably; `bye` is the
    /// protocol's clean close).
    case dropped
    /// A newer session of the same device and role took over (4001).
    case replaced
    /// The device's app session took over from this extension session, or refused it (4002).
    case preempted
    /// The device was deleted or its credential replaced (4003).
    case revoked
    /// The server closed it for a protocol error (4008).
    case protocolError = "protocol-error"
    /// The server is shutting down (1001).
    case shutdown
    /// Too many frames waiting to be processed (4029).
    case overloaded
    /// The server failed (1011).
    case serverError = "server-error"
}

/// The protocol logic of one sync session as a value type with pure transitions: each event
/// returns the actions the driver (`SyncConnection`) must perform, in order, and the results of
/// store reads come back as events. No sockets, clocks or store here, so every rule of
/// docs/sync-protocol.md is tested directly (SyncSessionStateMachineTests).
///
/// States: awaiting `hello` → starting (the user's last sequence is being read) → streaming →
/// closing. The flow-control invariant: at most `window` messages are sent and not yet
/// acknowledged; messages beyond that stay in the store, and at most one read of the store is
/// outstanding, so a session holds at most `window` messages in memory.
struct SyncSessionStateMachine: Sendable {
    struct Limits: Sendable, Equatable {
        /// The window granted when `hello` names none.
        var defaultWindow: Int
        /// The largest window granted (`sync.max-window`).
        var maximumWindow: Int
    }

    enum Action: Equatable, Sendable {
        case send(SyncServerFrame)
        /// Take the device's slot for this role in the hub and feed `registered(_:)`.
        case register(SyncRole)
        /// Read the user's last sequence, unread count and the read messages up to `cursor`, and
        /// feed `started(lastSequence:badge:readUpToCursor:)`.
        case loadStart(cursor: Int64)
        /// Read at most `limit` mailbox entries after `after` and feed `fetched(_:)`.
        case fetch(after: Int64, limit: Int)
        /// Record a cumulative ack in the store (and in presence).
        case storeAck(upTo: Int64)
        /// Record that this device read `ids`; the driver tells the user's other sessions.
        case markRead(ids: [String])
        /// Record what the device reports happened to messages (their traces, docs/trace.md).
        case storeReceipts([SyncReceipt])
        /// Send the close frame and end the session.
        case close(SyncCloseCode, reason: String, end: SyncSessionEnd)
    }

    struct Streaming: Sendable, Equatable {
        var window: Int
        /// The highest sequence sent (or the hello cursor, before anything is sent).
        var sentUpTo: Int64
        /// The highest cumulative ack received (starts at the hello cursor).
        var ackedUpTo: Int64
        /// Sequences sent and not acknowledged, ascending; never more than `window`.
        var inFlight: [Int64] = []
        /// The limit of the outstanding fetch, if one is outstanding.
        var fetchLimit: Int?
        /// Whether the store may hold entries after `sentUpTo`.
        var moreMayExist = true
        /// New messages were announced while a fetch was outstanding.
        var wokenDuringFetch = false
    }

    enum State: Sendable, Equatable {
        case awaitingHello
        /// `hello` was accepted; the hub decides whether the role's slot is ours.
        case registering(cursor: Int64, window: Int)
        case starting(cursor: Int64, window: Int)
        case streaming(Streaming)
        case closing(SyncSessionEnd)
    }

    let sessionID: String
    let limits: Limits
    private(set) var state: State = .awaitingHello

    init(sessionID: String, limits: Limits) {
        self.sessionID = sessionID
        self.limits = limits
    }

    var isClosing: Bool { if case .closing = state { true } else { false } }

    // MARK: Events from the device

    mutating func receive(_ frame: SyncClientFrame) -> [Action] {
        switch (state, frame) {
        case (.closing, _):
            return []
        case (.awaitingHello, .hello(let version, let role, let cursor, let window)):
            guard version == SyncProtocol.version else {
                return violation(.unsupportedVersion, "version \(version) is not supported; this server speaks \(SyncProtocol.version)")
            }
            guard cursor >= 0 else { return violation(.invalidField, "cursor: must not be negative") }
            if let window, window < 1 { return violation(.invalidField, "window: must be at least 1") }
            let granted = Int(min(window ?? Int64(limits.defaultWindow), Int64(limits.maximumWindow)))
            state = .registering(cursor: cursor, window: granted)
            return [.register(role)]
        case (.awaitingHello, _):
            return violation(.unexpectedFrame, "the first frame must be hello")
        case (_, .hello):
            return violation(.unexpectedFrame, "hello was already sent")
        case (.registering, _), (.starting, _):
            // The driver feeds `registered` and `started` before it reads the next frame, so
            // this cannot happen; refuse rather than guess.
            return violation(.unexpectedFrame, "the session is not started yet")
        case (.streaming(var streaming), .ack(let upTo)):
            guard upTo <= streaming.sentUpTo else {
                return violation(.ackBeyondSent, "upTo: \(upTo) is above the last sequence sent (\(streaming.sentUpTo))")
            }
            // Cumulative and never backwards: a stale ack changes nothing.
            guard upTo > streaming.ackedUpTo else { return [] }
            streaming.ackedUpTo = upTo
            streaming.inFlight.removeAll { $0 <= upTo }
            var actions: [Action] = [.storeAck(upTo: upTo)]
            actions += Self.fetchIfPossible(&streaming)
            state = .streaming(streaming)
            return actions
        case (.streaming, .read(let ids)):
            return ids.isEmpty ? [] : [.markRead(ids: ids)]
        case (.streaming, .receipts(let receipts)):
            return receipts.isEmpty ? [] : [.storeReceipts(receipts)]
        case (.streaming, .ping(let id)):
            return [.send(.pong(id: id))]
        case (.streaming, .bye):
            state = .closing(.clean)
            return [.close(.normal, reason: "bye", end: .clean)]
        }
    }

    /// A frame that could not be parsed.
    mutating func receiveInvalid(_ violation: SyncFrameError) -> [Action] {
        if isClosing { return [] }
        return self.violation(violation.code, violation.message)
    }

    // MARK: Results of the hub and of store reads

    /// The hub's answer to `register`: read the mailbox, or close (4002, 1001).
    mutating func registered(_ registration: SyncRegistration) -> [Action] {
        guard case .registering(let cursor, let window) = state else { return [] }
        switch registration {
        case .accepted:
            state = .starting(cursor: cursor, window: window)
            return [.loadStart(cursor: cursor)]
        case .refused(let code, let reason, let end):
            state = .closing(end)
            return [.close(code, reason: reason, end: end)]
        }
    }

    /// - Parameters:
    ///   - badge: the user's unread count, told in `welcome`.
    ///   - readUpToCursor: messages the device already has that were read (on some device): a
    ///     `readElsewhere` after `welcome` tells it to remove their notifications (seed 000).
    ///   - endedCalls: calls that ended recently: an app a VoIP push woke must stop ringing one
    ///     that ended before it connected (rule 6).
    mutating func started(
        lastSequence: Int64, badge: Int, readUpToCursor: [String] = [], endedCalls: [(String, CallEndOutcome)] = []
    ) -> [Action] {
        guard case .starting(let cursor, let window) = state else { return [] }
        guard cursor <= lastSequence else {
            return violation(.cursorAhead, "cursor: \(cursor) is past the mailbox's last sequence (\(lastSequence))")
        }
        var streaming = Streaming(window: window, sentUpTo: cursor, ackedUpTo: cursor)
        var actions: [Action] = [
            .send(.welcome(
                version: SyncProtocol.version, sessionID: sessionID, lastSequence: lastSequence, window: window, badge: badge,
                features: SyncProtocol.features))
        ]
        if !readUpToCursor.isEmpty { actions.append(.send(.readElsewhere(ids: readUpToCursor, badge: badge))) }
        actions += endedCalls.map { .send(.callEnded(callID: $0.0, outcome: $0.1)) }
        // The hello cursor is what the device has durably stored: an ack in all but name.
        if cursor > 0 { actions.append(.storeAck(upTo: cursor)) }
        streaming.moreMayExist = cursor < lastSequence
        actions += Self.fetchIfPossible(&streaming)
        state = .streaming(streaming)
        return actions
    }

    mutating func fetched(_ entries: [MailboxEntry]) -> [Action] {
        guard case .streaming(var streaming) = state, let limit = streaming.fetchLimit else { return [] }
        streaming.fetchLimit = nil
        var actions: [Action] = []
        for entry in entries where entry.sequence > streaming.sentUpTo && streaming.inFlight.count < streaming.window {
            actions.append(.send(.message(SyncMessage(entry))))
            streaming.inFlight.append(entry.sequence)
            streaming.sentUpTo = entry.sequence
        }
        // A short read means the store had nothing more (expired entries are skipped by the
        // store, not counted), unless new messages were announced meanwhile.
        streaming.moreMayExist = entries.count >= limit || streaming.wokenDuringFetch
        streaming.wokenDuringFetch = false
        actions += Self.fetchIfPossible(&streaming)
        state = .streaming(streaming)
        return actions
    }

    // MARK: Events from the hub

    /// New messages were appended to the user's mailbox.
    ///
    /// - Parameter offered: the new entries, when the node that appended them has them at hand
    ///   (empty: only a wake-up). An entry that directly follows what was sent is sent as it is,
    ///   without reading the store: with nothing outstanding and no read under way, the store had
    ///   nothing after `sentUpTo` when it was last read, so the next sequence is the next entry.
    ///   Anything else (a gap: an entry announced out of order or not offered; a read under way;
    ///   a full window) falls back to reading the store.
    mutating func newMessages(offered: [MailboxEntry] = []) -> [Action] {
        guard case .streaming(var streaming) = state else { return [] }
        var actions: [Action] = []
        var mustRead = offered.isEmpty || streaming.fetchLimit != nil || streaming.moreMayExist
        if !mustRead {
            for entry in offered.sorted(by: { $0.sequence < $1.sequence }) where entry.sequence > streaming.sentUpTo {
                guard entry.sequence == streaming.sentUpTo + 1, streaming.inFlight.count < streaming.window else {
                    mustRead = true
                    break
                }
                actions.append(.send(.message(SyncMessage(entry))))
                streaming.inFlight.append(entry.sequence)
                streaming.sentUpTo = entry.sequence
            }
        }
        if mustRead {
            streaming.moreMayExist = true
            if streaming.fetchLimit != nil { streaming.wokenDuringFetch = true }
            actions += Self.fetchIfPossible(&streaming)
        }
        state = .streaming(streaming)
        return actions
    }

    /// Another device of the user read messages.
    mutating func readElsewhere(ids: [String], badge: Int) -> [Action] {
        guard case .streaming = state, !ids.isEmpty else { return [] }
        return [.send(.readElsewhere(ids: ids, badge: badge))]
    }

    /// A call of the user ended: the app ends its CallKit call.
    mutating func callEnded(callID: String, outcome: CallEndOutcome) -> [Action] {
        guard case .streaming = state else { return [] }
        return [.send(.callEnded(callID: callID, outcome: outcome))]
    }

    /// The server ends the session (replaced, revoked, shutting down, overloaded).
    mutating func close(_ code: SyncCloseCode, reason: String, end: SyncSessionEnd) -> [Action] {
        if isClosing { return [] }
        state = .closing(end)
        return [.close(code, reason: reason, end: end)]
    }

    /// The connection ended. Returns how the session ended: what it was closing with, or
    /// `dropped` if it ended without `bye` or a close of the server's.
    mutating func connectionEnded() -> SyncSessionEnd {
        if case .closing(let end) = state { return end }
        state = .closing(.dropped)
        return .dropped
    }

    // MARK: Helpers

    private mutating func violation(_ code: BeckonErrorCode, _ message: String) -> [Action] {
        state = .closing(.protocolError)
        return [.send(.error(code: code, message: message)), .close(.protocolError, reason: code.rawValue, end: .protocolError)]
    }

    private static func fetchIfPossible(_ streaming: inout Streaming) -> [Action] {
        let room = streaming.window - streaming.inFlight.count
        guard streaming.fetchLimit == nil, streaming.moreMayExist, room > 0 else { return [] }
        streaming.fetchLimit = room
        streaming.wokenDuringFetch = false
        return [.fetch(after: streaming.sentUpTo, limit: room)]
    }
}

extension SyncMessage {
    /// A mailbox entry as its `message` frame carries it.
    init(_ entry: MailboxEntry) {
        let message = entry.message
        self.init(
            sequence: entry.sequence, id: message.id, kind: message.kind, payload: Array(message.payload),
            createdAt: message.createdAt, expiresAt: message.expiresAt, read: entry.read)
    }
}
