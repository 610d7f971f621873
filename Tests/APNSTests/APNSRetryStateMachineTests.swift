@testable import APNS
import APNSCore
import Testing

@Suite struct APNSRetryStateMachineTests {
    let backoff = APNSBackoff(base: 1, cap: 8)

    func answer(_ status: Int, _ reason: APNSReason? = nil) -> APNSRetryStateMachine.Outcome {
        .answered(APNSResponse(status: status, reason: reason))
    }

    @Test func successAndNeverRetryReasonsAreDeliveredAtOnce() {
        var retries = APNSRetryStateMachine(policy: APNSRetryPolicy(maximumAttempts: 4, backoff: backoff))
        #expect(retries.next(after: answer(200), remaining: 30, random: 1) == .deliver(APNSResponse(status: 200)))
        for reason in [APNSReason.unregistered, .badDeviceToken, .payloadTooLarge, .badTopic] {
            var fresh = APNSRetryStateMachine(policy: APNSRetryPolicy(maximumAttempts: 4, backoff: backoff))
            let response = APNSResponse(status: reason.status!, reason: reason)
            #expect(fresh.next(after: .answered(response), remaining: 30, random: 1) == .deliver(response))
        }
    }

    @Test func serverErrorsBackOffUntilAttemptsRunOut() {
        var retries = APNSRetryStateMachine(policy: APNSRetryPolicy(maximumAttempts: 3, backoff: backoff))
        #expect(retries.next(after: answer(503, .serviceUnavailable), remaining: 30, random: 1) == .retry(delay: 1, refreshToken: false))
        #expect(retries.next(after: answer(500, .internalServerError), remaining: 30, random: 1) == .retry(delay: 2, refreshToken: false))
        let last = APNSResponse(status: 429, reason: .tooManyRequests)
        #expect(retries.next(after: .answered(last), remaining: 30, random: 1) == .deliver(last))
        #expect(retries.attempts == 3)
    }

    @Test func staleTokenAsksForAFreshOne() {
        var retries = APNSRetryStateMachine(policy: APNSRetryPolicy(maximumAttempts: 4, backoff: backoff))
        #expect(retries.next(after: answer(403, .expiredProviderToken), remaining: 30, random: 1) == .retry(delay: 0, refreshToken: true))
    }

    @Test func unprocessedStreamsAreResentWithoutUsingAttempts() {
        var retries = APNSRetryStateMachine(policy: APNSRetryPolicy(maximumAttempts: 1, backoff: backoff))
        for _ in 0..<3 {
            #expect(retries.next(after: .connectionError(.goingAway), remaining: 30, random: 1) == .retry(delay: 0, refreshToken: false))
        }
        // Then they back off, so a server that keeps refusing is not hammered.
        #expect(retries.next(after: .connectionError(.streamReset(.refusedStream)), remaining: 30, random: 1) == .retry(delay: 1, refreshToken: false))
        #expect(retries.attempts == 1)
    }

    @Test func deadConnectionsUseAttempts() {
        var retries = APNSRetryStateMachine(policy: APNSRetryPolicy(maximumAttempts: 2, backoff: backoff))
        #expect(retries.next(after: .connectionError(.connectionClosed), remaining: 30, random: 1) == .retry(delay: 1, refreshToken: false))
        #expect(retries.next(after: .connectionError(.connectionClosed), remaining: 30, random: 1)
            == .fail(.connectionFailed(attempts: 2, lastError: .connectionClosed)))
    }

    @Test func nothingWaitsPastTheDeadline() {
        var retries = APNSRetryStateMachine(policy: APNSRetryPolicy(maximumAttempts: 4, backoff: backoff))
        #expect(retries.next(after: answer(503, .serviceUnavailable), remaining: 0.5, random: 1) == .fail(.deadlineExceeded(attempts: 2)))
        var timedOut = APNSRetryStateMachine(policy: APNSRetryPolicy(maximumAttempts: 4, backoff: backoff))
        #expect(timedOut.next(after: .connectionError(.deadlineExceeded), remaining: 0, random: 1) == .fail(.deadlineExceeded(attempts: 1)))
    }

    /// An attempt started just before the deadline is cut off by it with its answer on the way, and
    /// the caller can only send it again (a duplicate, apns.md G.19). None starts in the reserve;
    /// failing before it is a plain "not sent".
    @Test func noAttemptStartsInTheDeadlinesReserve() {
        var retries = APNSRetryStateMachine(policy: APNSRetryPolicy(maximumAttempts: 4, backoff: backoff), reserve: 3)
        #expect(retries.next(after: answer(503, .serviceUnavailable), remaining: 4.5, random: 1) == .retry(delay: 1, refreshToken: false))
        #expect(retries.next(after: .connectionError(.goingAway), remaining: 2.9, random: 1) == .fail(.deadlineExceeded(attempts: 2)))
        var late = APNSRetryStateMachine(policy: APNSRetryPolicy(maximumAttempts: 4, backoff: backoff), reserve: 3)
        #expect(late.next(after: answer(503, .serviceUnavailable), remaining: 3.9, random: 1) == .fail(.deadlineExceeded(attempts: 2)))
    }

    @Test func poolFailuresPushBack() {
        var retries = APNSRetryStateMachine(policy: APNSRetryPolicy(maximumAttempts: 4, backoff: backoff))
        #expect(retries.next(after: .poolFailure(.queueFull), remaining: 30, random: 1) == .fail(.overloaded))
        #expect(retries.next(after: .poolFailure(.shutDown), remaining: 30, random: 1) == .fail(.shutDown))
    }
}
