import APNSCore
import Foundation
import NIOCore
import NIOHTTP2

/// One emulated APNs connection's decisions, as a value type with pure transitions: which streams
/// are open, arriving or waiting for an answer, the receive windows, flushing once per read batch,
/// GOAWAY, the idle timeout, and the APNs rules (`ConnectionRules`).
///
/// `EmulatorConnectionHandler` decodes a frame or an event, calls one method, and performs the one
/// result it gets back. What all connections share (devices, faults, counters) is `EmulatorCore`'s:
/// the handler consults it between `evaluate` and `decided`. No channel and no clock here: time
/// comes in as an argument.
///
/// The stream tables live beside `state`, not in its payloads: a collection inside an enum payload
/// is copied when mutated unless it is moved out first, and these change with every request.
struct ConnectionStateMachine: Sendable {
    enum State: Equatable, Sendable {
        case open
        /// GOAWAY sent: streams above `lastStreamID` are not processed (RFC 9113 §6.8), new ones
        /// are ignored; those at or below it are still answered, and the connection closes once
        /// none is owed (`drainCheck`).
        case closing(lastStreamID: HTTP2StreamID)
        /// Reset, or the channel is gone.
        case closed
    }

    /// A request whose HEADERS and DATA are still arriving.
    private struct ArrivingStream: Sendable {
        var head: HTTP2Frame.FramePayload.Headers
        var body: [UInt8] = []
        var unacknowledgedBytes = 0
    }

    /// A request that has fully arrived, to be evaluated and decided.
    struct ReceivedRequest: Sendable {
        var streamID: HTTP2StreamID
        var head: RequestHead
        var body: [UInt8]
    }

    /// NIO leaves the receive windows to whoever consumes frames; they are given back in chunks.
    static let windowUpdateThreshold = 16_384

    private(set) var state = State.open
    private(set) var rules: ConnectionRules
    private let idleTimeout: TimeAmount?
    private var arriving: [HTTP2StreamID: ArrivingStream] = [:]
    /// Streams the client opened that are not closed yet (what the stream limit counts).
    private(set) var openStreams: Set<HTTP2StreamID> = []
    /// Accepted streams whose answer is delayed or withheld.
    private(set) var unanswered: Set<HTTP2StreamID> = []
    /// Those of `unanswered` whose answer is only delayed: owed, so a closing connection waits for them.
    private var delayed: Set<HTTP2StreamID> = []
    private var highestStreamID = HTTP2StreamID.rootStream
    /// The highest stream taken in (evaluated, and processed if valid): a GOAWAY after an answer
    /// names at least this one, so no stream APNs acted on is declared unprocessed (RFC 9113 §6.8,
    /// apns.md G.19). Requests may complete out of id order (their DATA waits for flow control).
    private var highestDecidedStreamID = HTTP2StreamID.rootStream
    /// The close after GOAWAY was asked for (`drainCheck`).
    private var drained = false
    private var connectionBytesToAcknowledge = 0
    /// Writes made during a read batch are flushed once, at its end; others at once.
    private var isReading = false
    private var needsFlush = false
    private var lastActivity: NIODeadline
    private var ids: RequestIDGenerator

    init(rules: ConnectionRules, idleTimeout: TimeAmount?, now: NIODeadline, ids: RequestIDGenerator = RequestIDGenerator()) {
        self.rules = rules
        self.idleTimeout = idleTimeout
        self.lastActivity = now
        self.ids = ids
    }

    // MARK: Reading

    enum StreamAction: Sendable {
        case none
        /// Reset the stream with REFUSED_STREAM: over the advertised limit (RFC 9113 §5.1.2,
        /// apns.md C.4).
        case refuse(HTTP2StreamID)
        /// Send WINDOW_UPDATE on the stream.
        case sendWindowUpdate(HTTP2StreamID, increment: Int)
        /// The request is complete: `evaluate` it, let the core decide, then `decided`.
        case decide(ReceivedRequest)
    }

    mutating func headersReceived(_ headers: HTTP2Frame.FramePayload.Headers, on id: HTTP2StreamID) -> StreamAction {
        isReading = true
        if let stream = arriving[id] {
            // Trailers end the request.
            guard headers.endStream else { return .none }
            arriving.removeValue(forKey: id)
            return complete(id, stream)
        }
        guard state == .open, !openStreams.contains(id) else { return .none }
        openStreams.insert(id)
        if id > highestStreamID { highestStreamID = id }
        if openStreams.count > rules.advertisedStreamLimit {
            openStreams.remove(id)
            wrote()
            return .refuse(id)
        }
        let stream = ArrivingStream(head: headers)
        if headers.endStream { return complete(id, stream) }
        arriving[id] = stream
        return .none
    }

    mutating func dataReceived(_ payload: HTTP2Frame.FramePayload.Data, on id: HTTP2StreamID) -> StreamAction {
        isReading = true
        // Taken out while appending, so the body's storage is not shared and copied.
        guard var stream = arriving.removeValue(forKey: id) else { return .none }
        // Keep at most one byte more than the largest payload: enough to say PayloadTooLarge.
        let limit = APNSPushType.voip.maximumPayloadSize + 1
        if stream.body.count < limit, case .byteBuffer(let buffer) = payload.data {
            stream.body.append(contentsOf: buffer.readableBytesView.prefix(limit - stream.body.count))
        }
        if payload.endStream { return complete(id, stream) }
        stream.unacknowledgedBytes += payload.flowControlledLength
        var action = StreamAction.none
        if stream.unacknowledgedBytes >= Self.windowUpdateThreshold {
            action = .sendWindowUpdate(id, increment: stream.unacknowledgedBytes)
            stream.unacknowledgedBytes = 0
            wrote()
        }
        arriving[id] = stream
        return action
    }

    enum WindowAction: Equatable, Sendable {
        case none
        /// Send WINDOW_UPDATE on the connection with this increment.
        case sendWindowUpdate(Int)
    }

    /// A DATA frame used this much of the connection's receive window (payload and padding).
    mutating func connectionWindowConsumed(_ bytes: Int) -> WindowAction {
        connectionBytesToAcknowledge += bytes
        guard connectionBytesToAcknowledge >= Self.windowUpdateThreshold else { return .none }
        defer { connectionBytesToAcknowledge = 0 }
        wrote()
        return .sendWindowUpdate(connectionBytesToAcknowledge)
    }

    /// The client reset a stream: nothing more arrives for it, and it gets no answer.
    mutating func resetReceived(on id: HTTP2StreamID) {
        isReading = true
        arriving.removeValue(forKey: id)
        unanswered.remove(id)
        delayed.remove(id)
    }

    /// NIO closed a stream (answered, reset, or refused).
    mutating func streamClosed(_ id: HTTP2StreamID) {
        openStreams.remove(id)
        arriving.removeValue(forKey: id)
        unanswered.remove(id)
        delayed.remove(id)
    }

    enum ReadCompleteAction: Equatable, Sendable {
        case none
        case flush
    }

    mutating func readComplete(now: NIODeadline) -> ReadCompleteAction {
        isReading = false
        lastActivity = now
        guard needsFlush else { return .none }
        needsFlush = false
        return .flush
    }

    // MARK: Answering

    /// What the rules said about a request, for `EmulatorCore.handle`.
    struct RuleCheck: Sendable {
        var evaluation: Evaluation
        /// Complete requests on this connection so far, this one included (fault rules count them).
        var requestIndex: Int
        /// A new MAX_CONCURRENT_STREAMS to write first: the first valid token lifts the limit.
        var settings: Int?
    }

    /// Checks a complete request against the connection's rules (see `ConnectionRules.evaluate`).
    mutating func evaluate(_ request: ReceivedRequest, now: Date, policy: RequestPolicy) -> RuleCheck {
        var ids = self.ids
        defer { self.ids = ids }
        let (evaluation, settings) = rules.evaluate(
            request.head, body: request.body, now: now, policy: policy, makeID: { ids.next(uppercase: true) }
        )
        if settings != nil { wrote() }
        return RuleCheck(evaluation: evaluation, requestIndex: rules.requestsReceived, settings: settings)
    }

    /// One answer to write: SETTINGS first if the limit changes, then HEADERS (+ DATA), then GOAWAY
    /// if the connection must go.
    struct Answer: Sendable {
        var streamID: HTTP2StreamID
        /// MAX_CONCURRENT_STREAMS to advertise before the answer (apns.md C.2).
        var settings: Int?
        var status: Int
        var apnsID: String
        /// Nil on success: HEADERS only, with END_STREAM (apns.md A.5).
        var reason: APNSReason?
        var timestamp: Date?
        /// `apns-unique-id` (sandbox successes).
        var uniqueID: String?
        var goAway: GoAway?
        /// Flush after writing: outside a read batch, or a GOAWAY that must leave now.
        var flush: Bool
    }

    struct GoAway: Equatable, Sendable {
        var lastStreamID: HTTP2StreamID
        var reason: APNSReason
        /// Sent because the connection spent its error budget (apns.md C.4), for the counters.
        var errorBudgetSpent = false
    }

    enum AnswerAction: Sendable {
        case none
        case respond(Answer)
        /// Call `answerDue` for this stream after `delay`.
        case respondLater(HTTP2StreamID, delay: Duration, Outcome)
        /// Close the TCP connection abruptly (fault injection).
        case resetConnection
    }

    /// The core decided what to do with the request on `id`.
    mutating func decided(_ outcome: Outcome, for id: HTTP2StreamID) -> AnswerAction {
        if id > highestDecidedStreamID { highestDecidedStreamID = id }
        if outcome.wedge { rules.isWedged = true }
        switch outcome.action {
        case .resetConnection:
            state = .closed
            return .resetConnection
        case .neverRespond:
            unanswered.insert(id)
            return .none
        case .respond:
            if let delay = outcome.delay {
                unanswered.insert(id)
                delayed.insert(id)
                return .respondLater(id, delay: delay, outcome)
            }
            return answer(id, outcome) ?? .none
        }
    }

    /// A delayed answer's time came.
    mutating func answerDue(_ id: HTTP2StreamID, _ outcome: Outcome) -> AnswerAction {
        guard unanswered.remove(id) != nil else { return .none }  // Reset or closed meanwhile.
        delayed.remove(id)
        return answer(id, outcome) ?? .none
    }

    enum DrainAction: Equatable, Sendable {
        case none
        /// Close the connection (after a linger: the client, told by GOAWAY, normally closes first).
        case close
    }

    /// After GOAWAY, once per connection: close when no answer is owed on a stream at or below
    /// its last-stream-id, neither a delayed one nor one whose request is still arriving. Closing
    /// earlier would lose answers to requests APNs processed, and the client would send them
    /// again (RFC 9113 §6.8 graceful shutdown; apns.md G.19). Streams left unanswered on purpose
    /// (`neverRespond`, apns.md G.8) are not waited for.
    mutating func drainCheck() -> DrainAction {
        guard case .closing(let last) = state, !drained, delayed.isEmpty else { return .none }
        guard !arriving.keys.contains(where: { $0 <= last }) else { return .none }
        drained = true
        return .close
    }

    // MARK: Connection-level events (the emulator's API, the idle timer)

    enum GoAwayAction: Equatable, Sendable {
        case none
        /// Write GOAWAY with the reason as debug data, flush, and close once nothing is owed (`drainCheck`).
        case goAway(GoAway)
    }

    /// GOAWAY on demand: shutdown, or the API (apns.md A.5, C.4).
    mutating func goAwayRequested(reason: APNSReason) -> GoAwayAction {
        goAway(reason: reason, lastStreamID: highestStreamID).map(GoAwayAction.goAway) ?? .none
    }

    /// Close without GOAWAY; the handler resets the TCP connection.
    mutating func resetRequested() {
        state = .closed
    }

    /// Write SETTINGS with `settings` if any, reset `refused` with REFUSED_STREAM, and flush.
    struct StreamLimitChange: Equatable, Sendable {
        var settings: Int?
        var refused: [HTTP2StreamID]
    }

    /// The operator changed MAX_CONCURRENT_STREAMS; optionally refuse accepted-but-unanswered
    /// streams above the new limit, newest first (apns.md C.2: "in-flight streams get REFUSED_STREAM").
    mutating func streamLimitChanged(_ limit: Int, refuseExcessInFlight: Bool) -> StreamLimitChange {
        let settings = rules.changeConfiguredStreamLimit(limit)
        var refused: [HTTP2StreamID] = []
        if refuseExcessInFlight, openStreams.count > limit {
            refused = Array(unanswered.sorted(by: >).prefix(openStreams.count - limit))
            for id in refused {
                openStreams.remove(id)
                unanswered.remove(id)
                delayed.remove(id)
            }
        }
        needsFlush = false
        return StreamLimitChange(settings: settings, refused: refused)
    }

    /// Answer `ExpiredProviderToken` to everything from now on.
    mutating func wedge() {
        rules.isWedged = true
    }

    /// When the idle timer should first fire; nil without an idle timeout.
    var idleDeadline: NIODeadline? { idleTimeout.map { lastActivity + $0 } }

    enum IdleAction: Equatable, Sendable {
        /// Closing or closed: no more checks.
        case stop
        case goAway(GoAway)
        case checkAgain(at: NIODeadline)
    }

    /// Idle for the whole timeout with nothing owed to the client: GOAWAY `IdleTimeout`.
    mutating func idleTimerFired(now: NIODeadline) -> IdleAction {
        guard let idleTimeout, state == .open else { return .stop }
        let deadline = lastActivity + idleTimeout
        if now >= deadline, unanswered.isEmpty, let goAway = goAway(reason: .idleTimeout, lastStreamID: highestStreamID) {
            return .goAway(goAway)
        }
        // Withheld answers keep an idle connection open; look again a timeout later.
        return .checkAgain(at: deadline > now ? deadline : now + idleTimeout)
    }

    /// The channel is gone: nothing is answered any more.
    mutating func channelInactive() {
        state = .closed
        arriving.removeAll()
        unanswered.removeAll()
        delayed.removeAll()
    }

    // MARK: Internals

    private mutating func complete(_ id: HTTP2StreamID, _ stream: ArrivingStream) -> StreamAction {
        if case .closing(let last) = state, id > last { return .none }
        if state == .closed { return .none }
        return .decide(ReceivedRequest(streamID: id, head: RequestHead(stream.head), body: stream.body))
    }

    private mutating func answer(_ id: HTTP2StreamID, _ outcome: Outcome) -> AnswerAction? {
        guard case .respond(let status, let reason, let timestamp, let uniqueID) = outcome.action else { return nil }
        var answer = Answer(
            streamID: id,
            settings: rules.responded(status: status, throttleOnReject: outcome.throttleOnReject),
            status: status, apnsID: outcome.apnsID, reason: reason, timestamp: timestamp,
            uniqueID: uniqueID ? ids.next(uppercase: false) : nil,
            flush: false
        )
        // Not `id` alone: streams after it may have been taken in while its answer waited.
        let last = max(id, highestDecidedStreamID)
        if let reason, rules.countError(status: status, reason: reason, budget: outcome.errorBudget) {
            answer.goAway = goAway(reason: reason, lastStreamID: last, errorBudgetSpent: true)
        }
        if answer.goAway == nil, let reason = outcome.goAwayAfter {
            answer.goAway = goAway(reason: reason, lastStreamID: last)
        }
        answer.flush = answer.goAway != nil ? flushed() : wrote()
        return .respond(answer)
    }

    /// Starts closing; nil when already closing or closed (one GOAWAY per connection).
    private mutating func goAway(reason: APNSReason, lastStreamID: HTTP2StreamID, errorBudgetSpent: Bool = false) -> GoAway? {
        guard state == .open else { return nil }
        state = .closing(lastStreamID: lastStreamID)
        needsFlush = false  // A GOAWAY is flushed at once, with everything before it.
        return GoAway(lastStreamID: lastStreamID, reason: reason, errorBudgetSpent: errorBudgetSpent)
    }

    /// Records a write; returns whether to flush it now (outside a read batch).
    @discardableResult
    private mutating func wrote() -> Bool {
        if isReading {
            needsFlush = true
            return false
        }
        return flushed()
    }

    private mutating func flushed() -> Bool {
        needsFlush = false
        return true
    }
}

extension HTTP2Frame.FramePayload.Data {
    /// What the frame counts against the receive windows: payload and padding (RFC 9113 §6.9.1).
    var flowControlledLength: Int { data.readableBytes + (paddingBytes.map { $0 + 1 } ?? 0) }
}
