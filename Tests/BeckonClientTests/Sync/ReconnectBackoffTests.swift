import BeckonClient
import BeckonClientTestSupport
import Testing

@Suite struct ReconnectBackoffTests {
    let backoff = ReconnectBackoff(base: .seconds(1), maximum: .seconds(8))

    @Test func growsExponentiallyUpToTheMaximum() {
        #expect(backoff.delay(attempt: 1, unit: 1) == .seconds(1))
        #expect(backoff.delay(attempt: 2, unit: 1) == .seconds(2))
        #expect(backoff.delay(attempt: 4, unit: 1) == .seconds(8))
        #expect(backoff.delay(attempt: 40, unit: 1) == .seconds(8))
    }

    @Test func jitterSpreadsOverTheUpperHalf() {
        #expect(backoff.delay(attempt: 3, unit: 0) == .seconds(2))
        #expect(backoff.delay(attempt: 3, unit: 0.5) == .seconds(3))
    }

    @Test func theJitterSourceIsDeterministicAndUniform() {
        var a = JitterSource(seed: 7)
        var b = JitterSource(seed: 7)
        let values = (0..<1000).map { _ in a.next() }
        #expect(values == (0..<1000).map { _ in b.next() })
        #expect(values.allSatisfy { $0 >= 0 && $0 < 1 })
        #expect(abs(values.reduce(0, +) / 1000 - 0.5) < 0.05)
    }
}
