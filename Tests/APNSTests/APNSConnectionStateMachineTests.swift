import APNSCore
import Foundation
import NIOCore
import NIOHPACK
import NIOHTTP2
import Testing

@testable import APNS

/// The client connection's decisions, without a channel or a clock.
@Suite struct APNSConnectionStateMachineTests {
    final class Stream: APNSConnectionStream {
        let request: APNSRequest
        let deadline: NIODeadline

        init(deadline: NIODeadline = .uptimeNanoseconds(10_000_000_000)) {
            let token = try! APNSDeviceToken(bytes: [UInt8](repeating: 0xAB, count: 32))
            request = try! APNSRequest(APNSAlertNotification(alert: .init(body: "hi")), to: token, bundleID: "com.example.app")
            self.deadline = deadline
        }
    }

    typealias Machine = APNSConnectionStateMachine<Stream>

    static let start = NIODeadline.uptimeNanoseconds(1_000_000_000)

    func machine(firstStreamID: Int32 = 1) -> Machine {
        Machine(pingInterval: .seconds(60), now: Self.start, firstStreamID: firstStreamID)
    }

    func headers(status: Int, apnsID: String? = nil) -> HPACKHeaders {
        var headers: HPACKHeaders = [":status": String(status)]
        if let apnsID { headers.add(name: "apns-id", value: apnsID) }
        return headers
    }

    /// Opens a stream and returns its id.
    func open(_ stream: Stream, on machine: inout Machine) -> HTTP2StreamID {
        guard case .open(let id) = machine.streamRequested(stream, channelIsActive: true) else {
            Issue.record("stream not opened")
            return .rootStream
        }
        return id
    }

    // MARK: Sending

    @Test func streamsGetOddIncreasingIdsAndTheFirstBatchSpeedsUpTicks() {
        var machine = machine()
        #expect(machine.nextTick() == .seconds(1))  // Idle: keep-alive pace.
        let ids = (0..<3).map { _ in open(Stream(), on: &machine) }
        #expect(ids == [1, 3, 5])
        #expect(machine.batchSent(now: Self.start) == .flushAndSpeedUpTicks)
        #expect(machine.nextTick() == Machine.busyTick)
        #expect(machine.batchSent(now: Self.start) == .flush)
        #expect(machine.openStreams == 3)
    }

    @Test func inactiveChannelRefusesRequests() {
        var machine = machine()
        guard case .refuse(.goingAway) = machine.streamRequested(Stream(), channelIsActive: false) else {
            Issue.record("not refused")
            return
        }
        #expect(machine.openStreams == 0)
    }

    @Test func lastStreamIdRetiresTheConnection() {
        var machine = machine(firstStreamID: Machine.lastUsableStreamID)
        guard case .openAndRetire(let id) = machine.streamRequested(Stream(), channelIsActive: true) else {
            Issue.record("expected the last stream to retire the connection")
            return
        }
        #expect(id == HTTP2StreamID(Machine.lastUsableStreamID))
        #expect(machine.state == .goingAway)
        guard case .refuse(.goingAway) = machine.streamRequested(Stream(), channelIsActive: true) else {
            Issue.record("a retired connection opened a stream")
            return
        }
    }

    // MARK: Answers

    @Test func successIsHeadersOnlyAndRecognisesTheEchoedId() {
        var machine = machine()
        let stream = Stream()
        let id = open(stream, on: &machine)
        let action = machine.headersReceived(headers(status: 200, apnsID: stream.request.apnsIDHeader), endStream: true, on: id)
        guard case .succeed(let answered, let response) = action else {
            Issue.record("no answer")
            return
        }
        #expect(answered === stream)
        #expect(response.status == 200)
        #expect(response.apnsID == stream.request.apnsID)
        #expect(machine.openStreams == 0)
        // Reported once, at the end of the read batch.
        #expect(machine.readComplete(now: Self.start) == .reportClosedStreams(1))
        #expect(machine.readComplete(now: Self.start) == .none)
    }

    @Test func errorBodyMayArriveInSeveralDataFrames() {
        var machine = machine()
        let id = open(Stream(), on: &machine)
        guard case .none = machine.headersReceived(headers(status: 410), endStream: false, on: id),
            case .none = machine.dataReceived(ByteBuffer(string: #"{"reason":"Unreg"#), endStream: false, on: id),
            case .succeed(_, let response) = machine.dataReceived(
                ByteBuffer(string: #"istered","timestamp":1700000000000}"#), endStream: true, on: id)
        else {
            Issue.record("unexpected actions")
            return
        }
        #expect(response.status == 410)
        #expect(response.reason == .unregistered)
        #expect(response.timestamp == Date(timeIntervalSince1970: 1_700_000_000))
    }

    @Test func framesForUnknownStreamsAreIgnored() {
        var machine = machine()
        guard case .none = machine.headersReceived(headers(status: 200), endStream: true, on: 7),
            case .none = machine.dataReceived(nil, endStream: true, on: 7),
            case .none = machine.resetReceived(.cancel, on: 7)
        else {
            Issue.record("acted on an unknown stream")
            return
        }
        #expect(machine.readComplete(now: Self.start) == .none)
    }

    @Test func resetFailsTheStream() {
        var machine = machine()
        let stream = Stream()
        let id = open(stream, on: &machine)
        guard case .fail(let failed, .streamReset(.refusedStream)) = machine.resetReceived(.refusedStream, on: id) else {
            Issue.record("not failed")
            return
        }
        #expect(failed === stream)
    }

    @Test func streamClosedByNIOReportsAtOnceOutsideARead() {
        var machine = machine()
        let first = open(Stream(), on: &machine)
        let second = open(Stream(), on: &machine)
        guard case .failAndReport(_, .streamReset(.cancel), closedStreams: 1) = machine.streamClosed(first, reason: nil) else {
            Issue.record("expected an immediate report")
            return
        }
        // During a read, the report waits for its end.
        _ = machine.headersReceived(headers(status: 200), endStream: false, on: second)
        guard case .fail(_, .streamReset(.protocolError)) = machine.streamClosed(second, reason: .protocolError) else {
            Issue.record("expected a failure")
            return
        }
        #expect(machine.readComplete(now: Self.start) == .reportClosedStreams(1))
        guard case .none = machine.streamClosed(second, reason: nil) else {
            Issue.record("closed twice")
            return
        }
    }

    // MARK: Connection frames

    @Test func settingsReportTheStreamLimitAndDefaultToAHundred() {
        var machine = machine()
        #expect(machine.settingsReceived([HTTP2Setting(parameter: .initialWindowSize, value: 1000)]) == .reportMaxConcurrentStreams(100))
        #expect(machine.settingsReceived([]) == .none)
        #expect(machine.settingsReceived([HTTP2Setting(parameter: .maxConcurrentStreams, value: 1000)]) == .reportMaxConcurrentStreams(1000))
    }

    @Test func goAwayFailsOnlyUnprocessedStreamsAndStopsOpening() {
        var machine = machine()
        let streams = (0..<4).map { _ in Stream() }
        let ids = streams.map { open($0, on: &machine) }  // 1, 3, 5, 7
        guard case .goingAway(let failing, let reason) = machine.goAwayReceived(lastStreamID: ids[1], reason: "Shutdown") else {
            Issue.record("no GOAWAY action")
            return
        }
        #expect(failing.map(ObjectIdentifier.init) == streams[2...].map(ObjectIdentifier.init))
        #expect(reason == "Shutdown")
        #expect(machine.state == .goingAway)
        #expect(machine.openStreams == 2)
        #expect(machine.readComplete(now: Self.start) == .reportClosedStreams(2))
        guard case .refuse(.goingAway) = machine.streamRequested(Stream(), channelIsActive: true) else {
            Issue.record("opened a stream after GOAWAY")
            return
        }
        // Streams at or below lastStreamID still get their answers.
        guard case .succeed = machine.headersReceived(headers(status: 200), endStream: true, on: ids[0]) else {
            Issue.record("processed stream not answered")
            return
        }
    }

    @Test func receiveWindowIsGivenBackInChunks() {
        var machine = machine()
        #expect(machine.connectionWindowConsumed(20_000) == .none)
        #expect(machine.connectionWindowConsumed(20_000) == .sendWindowUpdate(40_000))
        #expect(machine.connectionWindowConsumed(100) == .none)
    }

    // MARK: Timers

    @Test func sweepExpiresOnlyStreamsPastTheirDeadline() {
        var machine = machine()
        let early = Stream(deadline: Self.start + .seconds(1))
        let late = Stream(deadline: Self.start + .seconds(5))
        let earlyID = open(early, on: &machine)
        _ = open(late, on: &machine)
        guard case .none = machine.sweepDeadlines(now: Self.start) else {
            Issue.record("expired too early")
            return
        }
        guard case .expire(let expired, closedStreams: 1) = machine.sweepDeadlines(now: Self.start + .seconds(2)) else {
            Issue.record("nothing expired")
            return
        }
        #expect(expired.map(\.id) == [earlyID])
        #expect(expired.first?.stream === early)
        #expect(machine.openStreams == 1)
        // A late answer for the expired stream is ignored.
        guard case .none = machine.headersReceived(headers(status: 200), endStream: true, on: earlyID) else {
            Issue.record("answered an expired stream")
            return
        }
    }

    @Test func idleConnectionIsPingedAndClosedWhenThePingGoesUnanswered() {
        var machine = machine()
        #expect(machine.keepAliveCheck(now: Self.start + .seconds(30)) == .none)
        #expect(machine.keepAliveCheck(now: Self.start + .seconds(60)) == .ping)
        #expect(machine.keepAliveCheck(now: Self.start + .seconds(90)) == .none)  // Not a whole interval yet.
        #expect(machine.keepAliveCheck(now: Self.start + .seconds(120)) == .close)
    }

    @Test func answeredPingOrTrafficKeepsTheConnection() {
        var machine = machine()
        #expect(machine.keepAliveCheck(now: Self.start + .seconds(60)) == .ping)
        machine.pingAckReceived()
        // Traffic since the last check: no PING needed.
        _ = machine.readComplete(now: Self.start + .seconds(100))
        #expect(machine.keepAliveCheck(now: Self.start + .seconds(120)) == .none)
        #expect(machine.keepAliveCheck(now: Self.start + .seconds(180)) == .ping)
    }

    // MARK: Closing

    @Test func channelInactiveFailsEveryOpenStreamOnce() {
        var machine = machine()
        let streams = (0..<3).map { _ in Stream() }
        for stream in streams { _ = open(stream, on: &machine) }
        guard case .reportClosed(let failing) = machine.channelInactive() else {
            Issue.record("no close action")
            return
        }
        #expect(failing.map(ObjectIdentifier.init) == streams.map(ObjectIdentifier.init))
        #expect(machine.state == .closed)
        guard case .none = machine.channelInactive(),
            case .none = machine.goAwayReceived(lastStreamID: .rootStream, reason: nil),
            case .refuse(.goingAway) = machine.streamRequested(Stream(), channelIsActive: true)
        else {
            Issue.record("a closed connection acted")
            return
        }
    }
}
