import APNSCore
import Foundation
import NIOCore
import NIOHPACK
import NIOHTTP2

/// What the connection state machine needs to know about a request it carries:
/// `APNSStreamRequest` in production, a stub in the tests.
protocol APNSConnectionStream {
    var request: APNSRequest { get }
    var deadline: NIODeadline { get }
}

/// One APNs client connection's decisions, as a value type with pure transitions: stream ids,
/// the open streams and what has arrived for them, GOAWAY, the receive window, keep-alive PINGs,
/// and when to tell the pool that streams ended.
///
/// `APNSConnectionHandler` decodes a frame or an event, calls one method, and performs the one
/// result it gets back. No channel and no clock here: time comes in as an argument.
///
/// The open streams live beside `state`, not in its payloads: a dictionary inside an enum payload
/// is copied when mutated unless it is moved out first, and this table changes twice per
/// notification.
struct APNSConnectionStateMachine<Stream: APNSConnectionStream> {
    enum State: Equatable {
        /// Opening streams.
        case active
        /// GOAWAY received, or stream ids used up: finishing the open streams, opening none.
        case goingAway
        /// The channel is gone.
        case closed
    }

    private struct OpenStream {
        let stream: Stream
        var status: Int?
        var apnsID: UUID?
        var uniqueID: UUID?
        var body: ByteBuffer?
    }

    /// Client stream ids are odd and end at 2^31-1 (RFC 9113 §5.1.1); retire the connection before.
    static var lastUsableStreamID: Int32 { Int32.max - 2 }
    /// Deadlines are checked by one periodic sweep, not a timer per stream: scheduling and
    /// cancelling a timer for every notification showed up in profiles of the send path.
    /// The sweep runs every 50 ms while streams are open, and only for PINGs when idle.
    static var busyTick: TimeAmount { .milliseconds(50) }
    /// Without a stream multiplexer nobody else replenishes the connection's receive window
    /// (RFC 9113 §6.9): give back what DATA frames used once half of the initial 65,535 is gone,
    /// or the server stops sending answers after about 64 KB of error bodies.
    static var windowUpdateThreshold: Int { 32_768 }

    private(set) var state = State.active
    private var streams: [HTTP2StreamID: OpenStream] = [:]
    private var nextStreamID: Int32
    private var keepAlive: APNSKeepAlive
    /// Streams ended during a read batch are reported once, at its end (`readComplete`).
    private var isReading = false
    private var closedStreams = 0
    private var unacknowledgedBytes = 0
    private var sawSettings = false
    /// Whether the current tick was scheduled at the busy pace.
    private var tickIsBusy = false

    init(pingInterval: TimeAmount, now: NIODeadline, firstStreamID: Int32 = 1) {
        keepAlive = APNSKeepAlive(interval: pingInterval, now: now)
        nextStreamID = firstStreamID
    }

    var openStreams: Int { streams.count }

    // MARK: Sending

    enum OpenAction {
        /// Write the request on this new stream.
        case open(HTTP2StreamID)
        /// Write it, then tell the pool the connection is going away: that was the last stream id.
        case openAndRetire(HTTP2StreamID)
        /// Fail it (APNs never saw it) and tell the pool its stream is free.
        case refuse(APNSConnectionError)
    }

    /// A request of the outbox's batch wants a stream.
    mutating func streamRequested(_ stream: Stream, channelIsActive: Bool) -> OpenAction {
        guard channelIsActive, state == .active else { return .refuse(.goingAway) }
        let id = HTTP2StreamID(nextStreamID)
        nextStreamID += 2
        streams[id] = OpenStream(stream: stream)
        guard nextStreamID <= Self.lastUsableStreamID else {
            state = .goingAway
            return .openAndRetire(id)
        }
        return .open(id)
    }

    enum BatchSentAction: Equatable {
        case flush
        /// Flush, and reschedule the tick at the busy pace: the connection left idle.
        case flushAndSpeedUpTicks
    }

    /// The outbox's batch has been written.
    mutating func batchSent(now: NIODeadline) -> BatchSentAction {
        keepAlive.sawActivity(now)
        return !tickIsBusy && !streams.isEmpty ? .flushAndSpeedUpTicks : .flush
    }

    // MARK: Reading streams

    enum StreamAction {
        case none
        /// Resume the request with its answer.
        case succeed(Stream, APNSResponse)
        /// Resume the request with this error.
        case fail(Stream, APNSConnectionError)
    }

    mutating func headersReceived(_ headers: HPACKHeaders, endStream: Bool, on id: HTTP2StreamID) -> StreamAction {
        isReading = true
        guard var open = streams[id] else { return .none }  // Cancelled by its deadline, or by GOAWAY.
        if open.status == nil, let status = headers.first(name: ":status").flatMap({ Int($0) }) {
            open.status = status
            // APNs echoes the id we sent; recognise it without parsing.
            let apnsID = headers.first(name: "apns-id")
            open.apnsID = apnsID == open.stream.request.apnsIDHeader
                ? open.stream.request.apnsID : apnsID.flatMap(UUID.init(hexString:))
            open.uniqueID = headers.first(name: "apns-unique-id").flatMap(UUID.init(hexString:))
        }
        if endStream { return finish(id, open) }
        streams[id] = open
        return .none
    }

    mutating func dataReceived(_ bytes: ByteBuffer?, endStream: Bool, on id: HTTP2StreamID) -> StreamAction {
        isReading = true
        // Taken out while appending, so the body's storage is not shared and copied.
        guard var open = streams.removeValue(forKey: id) else { return .none }
        if var bytes {
            if open.body == nil { open.body = bytes } else { open.body!.writeBuffer(&bytes) }
        }
        if endStream { return finish(id, open) }
        streams[id] = open
        return .none
    }

    mutating func resetReceived(_ code: HTTP2ErrorCode, on id: HTTP2StreamID) -> StreamAction {
        isReading = true
        guard let open = streams.removeValue(forKey: id) else { return .none }
        closedStreams += 1
        return .fail(open.stream, .streamReset(code))
    }

    enum StreamClosedAction {
        case none
        /// Resume the request with this error; the pool hears at the end of the read batch.
        case fail(Stream, APNSConnectionError)
        /// Resume the request with this error and tell the pool now: no read batch is under way.
        case failAndReport(Stream, APNSConnectionError, closedStreams: Int)
    }

    /// NIO closed a stream on its own (a reset it sent, a GOAWAY, a protocol error on the stream):
    /// a stream that ends without an answer must not be left waiting.
    mutating func streamClosed(_ id: HTTP2StreamID, reason: HTTP2ErrorCode?) -> StreamClosedAction {
        guard let open = streams.removeValue(forKey: id) else { return .none }
        closedStreams += 1
        let error = APNSConnectionError.streamReset(reason ?? .cancel)
        if isReading { return .fail(open.stream, error) }
        return .failAndReport(open.stream, error, closedStreams: takeClosedStreams())
    }

    enum ReadCompleteAction: Equatable {
        case none
        /// Tell the pool this many streams ended.
        case reportClosedStreams(Int)
    }

    mutating func readComplete(now: NIODeadline) -> ReadCompleteAction {
        isReading = false
        keepAlive.sawActivity(now)  // Once per read batch; only the PING check reads it.
        let count = takeClosedStreams()
        return count > 0 ? .reportClosedStreams(count) : .none
    }

    // MARK: Reading the connection

    enum WindowAction: Equatable {
        case none
        /// Send WINDOW_UPDATE on the connection with this increment, and flush.
        case sendWindowUpdate(Int)
    }

    /// A DATA frame used this much of the connection's receive window (payload and padding).
    mutating func connectionWindowConsumed(_ bytes: Int) -> WindowAction {
        unacknowledgedBytes += bytes
        guard unacknowledgedBytes >= Self.windowUpdateThreshold else { return .none }
        defer { unacknowledgedBytes = 0 }
        return .sendWindowUpdate(unacknowledgedBytes)
    }

    enum SettingsAction: Equatable {
        case none
        /// Tell the pool the connection's stream limit.
        case reportMaxConcurrentStreams(Int)
    }

    mutating func settingsReceived(_ settings: HTTP2Settings) -> SettingsAction {
        defer { sawSettings = true }
        // A SETTINGS frame without the parameter leaves the limit as it was; before any value,
        // HTTP/2 says "unlimited", but APNs always announces one.
        if let limit = settings.last(where: { $0.parameter == .maxConcurrentStreams }) {
            return .reportMaxConcurrentStreams(limit.value)
        }
        return sawSettings ? .none : .reportMaxConcurrentStreams(100)
    }

    enum GoAwayAction {
        case none
        /// Fail these requests with `goingAway` (APNs did not process them: send them elsewhere),
        /// then tell the pool the connection is going away.
        case goingAway(failing: [Stream], reason: String?)
    }

    mutating func goAwayReceived(lastStreamID: HTTP2StreamID, reason: String?) -> GoAwayAction {
        isReading = true
        guard state != .closed else { return .none }
        state = .goingAway
        // Streams above lastStreamID were not processed (RFC 9113 §6.8).
        let unprocessed = streams.keys.filter { $0 > lastStreamID }.sorted()
        let failing = unprocessed.map { streams.removeValue(forKey: $0)!.stream }
        closedStreams += failing.count
        return .goingAway(failing: failing, reason: reason)
    }

    mutating func pingAckReceived() {
        keepAlive.pingAnswered()
    }

    // MARK: Timers

    /// When the next tick is due: soon while streams are open (their deadlines need checking),
    /// otherwise only as often as keep-alive needs.
    mutating func nextTick() -> TimeAmount {
        tickIsBusy = !streams.isEmpty
        return tickIsBusy ? Self.busyTick : min(keepAlive.interval, .seconds(1))
    }

    enum SweepAction {
        case none
        /// Fail these requests with `deadlineExceeded`, reset their streams, flush, and tell the
        /// pool that `closedStreams` ended.
        case expire([(id: HTTP2StreamID, stream: Stream)], closedStreams: Int)
    }

    /// The tick: streams past their deadline are given up.
    mutating func sweepDeadlines(now: NIODeadline) -> SweepAction {
        guard !streams.isEmpty else { return .none }
        var due: [HTTP2StreamID] = []  // Allocates only when something expired.
        for (id, open) in streams where open.stream.deadline <= now { due.append(id) }
        guard !due.isEmpty else { return .none }
        let expired = due.sorted().map { (id: $0, stream: streams.removeValue(forKey: $0)!.stream) }
        closedStreams += expired.count
        return .expire(expired, closedStreams: takeClosedStreams())
    }

    /// The tick: keep-alive (apns.md C.1, G.6).
    mutating func keepAliveCheck(now: NIODeadline) -> APNSKeepAlive.Action {
        keepAlive.check(now: now)
    }

    // MARK: Closing

    enum InactiveAction {
        case none
        /// Fail these requests with `connectionClosed` (APNs may have processed them), then tell
        /// the pool the connection closed.
        case reportClosed(failing: [Stream])
    }

    mutating func channelInactive() -> InactiveAction {
        guard state != .closed else { return .none }
        state = .closed
        isReading = false
        let failing = streams.keys.sorted().map { streams[$0]!.stream }
        streams.removeAll()
        closedStreams = 0  // The pool forgets the connection.
        return .reportClosed(failing: failing)
    }

    // MARK: Internals

    private mutating func finish(_ id: HTTP2StreamID, _ open: OpenStream) -> StreamAction {
        streams.removeValue(forKey: id)
        closedStreams += 1
        var response = APNSResponse(status: open.status ?? 0, apnsID: open.apnsID, uniqueID: open.uniqueID)
        if response.status != 200, let body = open.body {
            let parsed = APNSResponse.parseErrorBody(Array(body.readableBytesView))
            response.reason = parsed.reason
            response.timestamp = parsed.timestamp
        }
        return .succeed(open.stream, response)
    }

    private mutating func takeClosedStreams() -> Int {
        defer { closedStreams = 0 }
        return closedStreams
    }
}
