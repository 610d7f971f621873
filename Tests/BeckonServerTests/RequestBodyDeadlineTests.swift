@testable import BeckonServer
import Testing

/// The body deadline's transitions: armed by a head, cancelled by the body's end, and on expiry
/// a 408 only when nothing was answered (an early 401 is not answered twice).
@Suite struct RequestBodyDeadlineTests {
    @Test func aBodyThatEndsInTimeCancelsTheDeadline() {
        var deadline = RequestBodyDeadline()
        #expect(deadline.headReceived() == .arm)
        #expect(deadline.endReceived() == .cancel)
        #expect(deadline.state == .idle)
        // A timer that fires after the cancel (it raced it) changes nothing.
        #expect(deadline.deadlinePassed() == .none)
        #expect(deadline.forwardsInbound)
    }

    @Test func anUnansweredRequestIsAnswered408() {
        var deadline = RequestBodyDeadline()
        _ = deadline.headReceived()
        #expect(deadline.deadlinePassed() == .answerTimeoutAndClose)
        #expect(!deadline.forwardsInbound)
        // What trickles in after it goes nowhere and arms nothing.
        #expect(deadline.headReceived() == .none)
        #expect(deadline.endReceived() == .none)
    }

    @Test func anEarlyAnswerIsNotAnsweredAgainButTheConnectionStillCloses() {
        var deadline = RequestBodyDeadline()
        _ = deadline.headReceived()
        deadline.responseHeadSent()
        #expect(deadline.state == .receiving(answered: true))
        #expect(deadline.deadlinePassed() == .close)
    }

    @Test func eachRequestOnAKeepAliveConnectionHasItsOwnDeadline() {
        var deadline = RequestBodyDeadline()
        _ = deadline.headReceived()
        deadline.responseHeadSent()
        _ = deadline.endReceived()
        // The next request starts unanswered.
        #expect(deadline.headReceived() == .arm)
        #expect(deadline.state == .receiving(answered: false))
    }

    /// A client that sends its next request before the last answer (pipelining): the earlier
    /// request's response is not this one's, and no 408 may go out ahead of it.
    @Test func aPipelinedRequestIsNotAnsweredAheadOfAnEarlierOne() {
        var deadline = RequestBodyDeadline()
        #expect(deadline.headReceived(expectsBody: false) == .none)  // GET /health
        #expect(deadline.headReceived() == .arm)  // POST, its body trickling
        deadline.responseHeadSent()  // the GET's answer
        #expect(deadline.state == .receiving(answered: false))
        #expect(deadline.deadlinePassed() == .close, "the GET's answer has not ended: close, no 408")

        deadline = RequestBodyDeadline()
        _ = deadline.headReceived(expectsBody: false)
        _ = deadline.headReceived()
        deadline.responseHeadSent()
        deadline.responseEnded()  // the GET's answer is out
        #expect(deadline.deadlinePassed() == .answerTimeoutAndClose)
    }
}
