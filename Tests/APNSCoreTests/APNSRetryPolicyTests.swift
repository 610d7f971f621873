import APNSCore
import Testing

@Suite struct APNSRetryPolicyTests {
    let policy = APNSRetryPolicy(maximumAttempts: 3, backoff: APNSBackoff(base: 1, cap: 3))

    @Test func backsOffExponentiallyWithJitterUntilTheAttemptsAreUsed() {
        #expect(policy.delay(afterAttempts: 1, random: 1) == 1)
        #expect(policy.delay(afterAttempts: 2, random: 1) == 2)
        #expect(policy.delay(afterAttempts: 2, random: 0.5) == 1, "full jitter: anywhere up to the ceiling")
        #expect(policy.delay(afterAttempts: 3, random: 1) == nil, "three attempts made: give up")
    }

    @Test func neverLessThanATenthOfTheBaseAndNeverAboveTheCap() {
        let long = APNSRetryPolicy(maximumAttempts: 20, backoff: APNSBackoff(base: 1, cap: 3))
        #expect(long.delay(afterAttempts: 10, random: 1) == 3)
        #expect(long.delay(afterAttempts: 1, random: 0) == 0.1)
        #expect(APNSRetryPolicy(maximumAttempts: 0, backoff: long.backoff).maximumAttempts == 1)
    }
}
