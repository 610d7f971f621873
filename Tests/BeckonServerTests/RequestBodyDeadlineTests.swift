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
}
