import APNSCore
import Foundation
import NIOCore
import NIOHTTP2
import Testing

@testable import APNSEmulator

/// The emulated connection's decisions, without a channel or a clock.
@Suite("The connection state machine, without sockets")
struct ConnectionStateMachineTests {
    static let start = NIODeadline.uptimeNanoseconds(1_000_000_000)
    static let token = String(repeating: "ab", count: 32)

    /// Certificate authentication: no tokens needed, the limit is the configured one from the start.
    func machine(streamLimit: Int = 10, idleTimeout: TimeAmount? = .seconds(60)) -> ConnectionStateMachine {
        ConnectionStateMachine(
            rules: ConnectionRules(
                authentication: .certificate(baseTopic: "com.example.app"),
                configuredStreamLimit: streamLimit, initialStreamsBeforeAuthentication: 1
            ),
            idleTimeout: idleTimeout, now: Self.start, ids: RequestIDGenerator(seed: 1)
        )
    }

    func policy() -> RequestPolicy {
        RequestPolicy(configuration: APNSEmulatorConfiguration(authKeys: [], bundleIDs: ["com.example.app"]))
    }

    func headers(endStream: Bool = false) -> HTTP2Frame.FramePayload.Headers {
        HTTP2Frame.FramePayload.Headers(
            headers: [":method": "POST", ":scheme": "https", ":path": "/3/device/\(Self.token)", "apns-push-type": "alert"],
            endStream: endStream
        )
    }

    func data(_ text: String = #"{"aps":{"alert":"hi"}}"#, endStream: Bool = true) -> HTTP2Frame.FramePayload.Data {
        HTTP2Frame.FramePayload.Data(data: .byteBuffer(ByteBuffer(string: text)), endStream: endStream)
    }

    func success(delay: Duration? = nil, goAwayAfter: APNSReason? = nil) -> Outcome {
        Outcome(action: .respond(status: 200, reason: nil, timestamp: nil, uniqueID: true), apnsID: "ID", delay: delay, goAwayAfter: goAwayAfter)
    }

    func rejection(_ reason: APNSReason, budget: APNSEmulatorErrorBudget? = nil) -> Outcome {
        Outcome(
            action: .respond(status: reason.status ?? 500, reason: reason, timestamp: nil, uniqueID: false),
            apnsID: "ID", errorBudget: budget
        )
    }

    /// HEADERS then DATA; returns the complete request.
    func receive(_ id: HTTP2StreamID, on machine: inout ConnectionStateMachine) -> ConnectionStateMachine.ReceivedRequest? {
        guard case .none = machine.headersReceived(headers(), on: id),
            case .decide(let request) = machine.dataReceived(data(), on: id)
        else { return nil }
        return request
    }

    func answered(_ action: ConnectionStateMachine.AnswerAction) -> ConnectionStateMachine.Answer? {
        if case .respond(let answer) = action { return answer }
        return nil
    }

    // MARK: Requests and answers

    @Test func completeRequestIsEvaluatedAndAnsweredWithOneFlushPerReadBatch() throws {
        var machine = machine()
        let request = try #require(receive(1, on: &machine))
        #expect(request.head.path == "/3/device/\(Self.token)")
        #expect(request.body == Array(#"{"aps":{"alert":"hi"}}"#.utf8))
        let check = machine.evaluate(request, now: Date(), policy: policy())
        guard case .accepted(let validated) = check.evaluation else {
            Issue.record("rejected: \(check.evaluation)")
            return
        }
        #expect(validated.topic == "com.example.app")
        #expect(check.requestIndex == 1)
        let answer = try #require(answered(machine.decided(success(), for: 1)))
        #expect(answer.status == 200)
        #expect(answer.reason == nil)
        #expect(answer.uniqueID != nil)
        #expect(answer.goAway == nil)
        #expect(!answer.flush)  // During a read: flushed at its end.
        #expect(machine.readComplete(now: Self.start) == .flush)
        #expect(machine.readComplete(now: Self.start) == .none)
    }

    @Test func streamsOverTheAdvertisedLimitAreRefused() {
        var machine = machine(streamLimit: 1)
        guard case .none = machine.headersReceived(headers(), on: 1),
            case .refuse(3) = machine.headersReceived(headers(), on: 3)
        else {
            Issue.record("second stream not refused")
            return
        }
        #expect(machine.openStreams == [1])
        machine.streamClosed(1)
        guard case .none = machine.headersReceived(headers(), on: 5) else {
            Issue.record("refused under the limit")
            return
        }
    }

    @Test func receiveWindowsAreGivenBackInChunks() {
        var machine = machine()
        #expect(machine.connectionWindowConsumed(10_000) == .none)
        #expect(machine.connectionWindowConsumed(10_000) == .sendWindowUpdate(20_000))
        _ = machine.headersReceived(headers(), on: 1)
        let chunk = String(repeating: "x", count: 10_000)
        guard case .none = machine.dataReceived(data(chunk, endStream: false), on: 1),
            case .sendWindowUpdate(1, increment: 20_000) = machine.dataReceived(data(chunk, endStream: false), on: 1),
            case .decide(let request) = machine.dataReceived(data(chunk), on: 1)
        else {
            Issue.record("unexpected actions")
            return
        }
        // Only one byte more than the largest payload is kept: enough to say PayloadTooLarge.
        #expect(request.body.count == APNSPushType.voip.maximumPayloadSize + 1)
    }

    @Test func trailersEndARequest() {
        var machine = machine()
        _ = machine.headersReceived(headers(), on: 1)
        _ = machine.dataReceived(data(endStream: false), on: 1)
        guard case .decide = machine.headersReceived(.init(headers: [:], endStream: true), on: 1) else {
            Issue.record("trailers did not complete the request")
            return
        }
    }

    @Test func resetStreamIsForgotten() {
        var machine = machine()
        _ = machine.headersReceived(headers(), on: 1)
        machine.resetReceived(on: 1)
        guard case .none = machine.dataReceived(data(), on: 1) else {
            Issue.record("a reset stream completed")
            return
        }
    }

    // MARK: GOAWAY

    @Test func goAwayAfterAnAnswerStopsTheStreamsAboveIt() throws {
        var machine = machine()
        _ = machine.headersReceived(headers(), on: 1)
        _ = machine.headersReceived(headers(), on: 3)
        let first = try #require(machine.dataReceived(data(), on: 1).request)
        _ = machine.evaluate(first, now: Date(), policy: policy())
        let answer = try #require(answered(machine.decided(success(goAwayAfter: .shutdown), for: 1)))
        #expect(answer.goAway == .init(lastStreamID: 1, reason: .shutdown))
        #expect(answer.flush)  // A GOAWAY leaves at once.
        #expect(machine.state == .closing(lastStreamID: 1))
        #expect(machine.readComplete(now: Self.start) == .none)
        // Stream 3 was opened before the GOAWAY but is above it: not processed.
        guard case .none = machine.dataReceived(data(), on: 3),
            case .none = machine.headersReceived(headers(endStream: true), on: 5)
        else {
            Issue.record("processed a stream after GOAWAY")
            return
        }
        #expect(machine.goAwayRequested(reason: .shutdown) == .none)  // One GOAWAY per connection.
    }

    /// Requests complete out of stream order (their DATA waits for flow control), so the request
    /// that triggers GOAWAY may not be the highest one processed; a last-stream-id below a
    /// processed stream tells the client to send it again: a duplicate (apns.md G.19).
    @Test func goAwayNamesEveryStreamAlreadyTakenIn() throws {
        var machine = machine()
        _ = machine.headersReceived(headers(), on: 1)
        let later = try #require(receive(3, on: &machine))
        _ = machine.evaluate(later, now: Date(), policy: policy())
        guard case .respondLater = machine.decided(success(delay: .milliseconds(50)), for: 3) else {
            Issue.record("not delayed")
            return
        }
        let first = try #require(machine.dataReceived(data(), on: 1).request)
        _ = machine.evaluate(first, now: Date(), policy: policy())
        let answer = try #require(answered(machine.decided(success(goAwayAfter: .shutdown), for: 1)))
        #expect(answer.goAway == .init(lastStreamID: 3, reason: .shutdown))
        // So stream 3's delayed answer is still sent, and the client waits for it.
        #expect(answered(machine.answerDue(3, success()))?.status == 200)
    }

    /// While the answer that carries the GOAWAY waits (a response delay), later requests are
    /// processed; the GOAWAY must cover them.
    @Test func goAwayAfterADelayedAnswerCoversTheStreamsTakenInMeanwhile() throws {
        var machine = machine()
        let first = try #require(receive(1, on: &machine))
        _ = machine.evaluate(first, now: Date(), policy: policy())
        guard case .respondLater(1, _, let outcome) = machine.decided(success(delay: .milliseconds(50), goAwayAfter: .shutdown), for: 1)
        else {
            Issue.record("not delayed")
            return
        }
        let second = try #require(receive(3, on: &machine))
        _ = machine.evaluate(second, now: Date(), policy: policy())
        #expect(answered(machine.decided(success(), for: 3))?.status == 200)
        let answer = try #require(answered(machine.answerDue(1, outcome)))
        #expect(answer.goAway == .init(lastStreamID: 3, reason: .shutdown))
    }

    /// After GOAWAY the connection closes only once it owes nothing on the streams it covers: a
    /// request still arriving, or a delayed answer. Streams withheld on purpose are not waited for.
    @Test func closingConnectionWaitsForTheAnswersItOwes() throws {
        var machine = machine()
        _ = machine.headersReceived(headers(), on: 1)  // Its body comes later.
        let withheld = try #require(receive(3, on: &machine))
        _ = machine.evaluate(withheld, now: Date(), policy: policy())
        #expect(answered(machine.decided(Outcome(action: .neverRespond, apnsID: "ID"), for: 3)) == nil)
        let delayed = try #require(receive(5, on: &machine))
        _ = machine.evaluate(delayed, now: Date(), policy: policy())
        guard case .respondLater(5, _, let outcome) = machine.decided(success(delay: .milliseconds(50)), for: 5) else {
            Issue.record("not delayed")
            return
        }
        #expect(machine.drainCheck() == .none)  // No GOAWAY yet.
        #expect(machine.goAwayRequested(reason: .shutdown) == .goAway(.init(lastStreamID: 5, reason: .shutdown)))
        #expect(machine.drainCheck() == .none)  // Stream 1 is arriving, stream 5's answer is due.
        let first = try #require(machine.dataReceived(data(), on: 1).request)
        _ = machine.evaluate(first, now: Date(), policy: policy())
        #expect(answered(machine.decided(success(), for: 1))?.status == 200)
        #expect(machine.drainCheck() == .none)
        #expect(answered(machine.answerDue(5, outcome))?.status == 200)
        #expect(machine.drainCheck() == .close)
        #expect(machine.drainCheck() == .none)  // Once.
    }

    @Test func spentErrorBudgetSendsGoAwayWithTheLastReason() throws {
        var machine = machine()
        let budget = APNSEmulatorErrorBudget(errors: 2)
        _ = try #require(receive(1, on: &machine))
        #expect(try #require(answered(machine.decided(rejection(.badTopic, budget: budget), for: 1))).goAway == nil)
        _ = try #require(receive(3, on: &machine))
        let answer = try #require(answered(machine.decided(rejection(.badTopic, budget: budget), for: 3)))
        #expect(answer.goAway == .init(lastStreamID: 3, reason: .badTopic, errorBudgetSpent: true))
    }

    @Test func goAwayOnDemandNamesTheHighestStream() {
        var machine = machine()
        _ = machine.headersReceived(headers(), on: 1)
        _ = machine.headersReceived(headers(), on: 7)
        #expect(machine.goAwayRequested(reason: .shutdown) == .goAway(.init(lastStreamID: 7, reason: .shutdown)))
    }

    // MARK: Withheld and delayed answers

    @Test func delayedAnswerIsSentOnceWhenDueAndFlushedAtOnce() throws {
        var machine = machine()
        _ = try #require(receive(1, on: &machine))
        guard case .respondLater(1, delay: .milliseconds(20), _) = machine.decided(success(delay: .milliseconds(20)), for: 1) else {
            Issue.record("not delayed")
            return
        }
        #expect(machine.unanswered == [1])
        _ = machine.readComplete(now: Self.start)
        let answer = try #require(answered(machine.answerDue(1, success())))
        #expect(answer.flush)  // Outside a read batch.
        #expect(answered(machine.answerDue(1, success())) == nil)
    }

    @Test func delayedAnswerToAResetStreamIsDropped() throws {
        var machine = machine()
        _ = try #require(receive(1, on: &machine))
        _ = machine.decided(success(delay: .seconds(1)), for: 1)
        machine.resetReceived(on: 1)
        #expect(answered(machine.answerDue(1, success())) == nil)
    }

    @Test func lowerLimitRefusesTheNewestUnansweredStreams() throws {
        var machine = machine()
        for id: HTTP2StreamID in [1, 3, 5, 7] {
            _ = try #require(receive(id, on: &machine))
            _ = machine.decided(Outcome(action: .neverRespond, apnsID: "ID"), for: id)
        }
        let change = machine.streamLimitChanged(2, refuseExcessInFlight: true)
        #expect(change == .init(settings: 2, refused: [7, 5]))
        #expect(machine.openStreams == [1, 3])
        #expect(machine.unanswered == [1, 3])
    }

    // MARK: Idle timeout

    @Test func idleConnectionGetsGoAwayUnlessAnswersAreOwed() throws {
        var machine = machine(idleTimeout: .seconds(60))
        #expect(machine.idleDeadline == Self.start + .seconds(60))
        _ = try #require(receive(1, on: &machine))
        _ = machine.decided(Outcome(action: .neverRespond, apnsID: "ID"), for: 1)
        _ = machine.readComplete(now: Self.start + .seconds(10))
        #expect(machine.idleTimerFired(now: Self.start + .seconds(60)) == .checkAgain(at: Self.start + .seconds(70)))
        // Still owed an answer after the deadline: look again a timeout later, not at once.
        #expect(machine.idleTimerFired(now: Self.start + .seconds(70)) == .checkAgain(at: Self.start + .seconds(130)))
        machine.streamClosed(1)
        #expect(machine.idleTimerFired(now: Self.start + .seconds(130)) == .goAway(.init(lastStreamID: 1, reason: .idleTimeout)))
        #expect(machine.idleTimerFired(now: Self.start + .seconds(200)) == .stop)
    }

    @Test func withoutIdleTimeoutThereIsNoTimer() {
        var machine = machine(idleTimeout: nil)
        #expect(machine.idleDeadline == nil)
        #expect(machine.idleTimerFired(now: Self.start + .seconds(3600)) == .stop)
    }

    // MARK: Closing

    @Test func resetOutcomeClosesTheConnection() throws {
        var machine = machine()
        _ = try #require(receive(1, on: &machine))
        guard case .resetConnection = machine.decided(Outcome(action: .resetConnection, apnsID: "ID"), for: 1) else {
            Issue.record("not reset")
            return
        }
        #expect(machine.state == .closed)
        guard case .none = machine.headersReceived(headers(endStream: true), on: 3) else {
            Issue.record("a closed connection took a stream")
            return
        }
    }

    @Test func wedgedConnectionAnswersExpiredProviderToken() throws {
        var machine = ConnectionStateMachine(
            rules: ConnectionRules(authentication: .token, configuredStreamLimit: 10, initialStreamsBeforeAuthentication: 10),
            idleTimeout: nil, now: Self.start
        )
        machine.wedge()
        let request = try #require(receive(1, on: &machine))
        guard case .rejected(.expiredProviderToken, _, _) = machine.evaluate(request, now: Date(), policy: policy()).evaluation else {
            Issue.record("not wedged")
            return
        }
    }
}

extension ConnectionStateMachine.StreamAction {
    var request: ConnectionStateMachine.ReceivedRequest? {
        if case .decide(let request) = self { return request }
        return nil
    }
}
