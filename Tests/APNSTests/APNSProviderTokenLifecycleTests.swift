import APNS
import APNSCore
import APNSEmulator
import EmulatorTestSupport
import Foundation
import Testing

/// A day of sending on eight connections, on a clock the test moves: the provider token is
/// replaced as it ages, never so often that a connection changes tokens twice in 20 minutes
/// (429 `TooManyProviderTokenUpdates`) and never so late that it is over an hour old (403
/// `ExpiredProviderToken`), with the emulator enforcing both of Apple's rules (docs/apns.md B.1).
@Suite struct APNSProviderTokenLifecycleTests {
    @Test func twentyFourSimulatedHoursOnEightConnectionsWithoutATokenError() async throws {
        let clock = TestClock()
        let start = clock.now
        try await EmulatorHarness.run(
            emulatorClock: clock, clientClock: clock,
            // The emulator's idle timeout runs on the wall clock; a simulated day is seconds long.
            configureEmulator: { $0.idleTimeout = nil },
            configureClient: { $0.connectionsPerPool = 8 }
        ) { harness in
            var generator = SystemRandomNumberGenerator()
            var sent = 0
            var tokens: Set<Date> = []
            while clock.now.timeIntervalSince(start) < 24 * 3600 {
                // Enough at once that every connection of the pool carries some of them.
                let answers = try await harness.sendConcurrently(32)
                sent += answers.count
                #expect(answers.allSatisfy { $0.status == 200 }, "\(answers.filter { $0.status != 200 }.map(\.reason))")
                tokens.insert(try #require(harness.source.issuedAt))
                // Uneven steps of 1 to 9 minutes: a token's age is seen at many points of its life.
                clock.advance(by: TimeInterval(Int.random(in: 60...540, using: &generator)))
            }
            let counters = harness.emulator.counters
            #expect(counters.count(.tooManyProviderTokenUpdates) == 0)
            #expect(counters.count(.expiredProviderToken) == 0)
            #expect(counters.count(status: 200) == sent)
            // Eight connections, none replaced in the whole day.
            #expect(counters.connectionsAccepted == 8)
            // A token lives 50 minutes (APNSProviderTokenPolicy): about 29 in a day, each used.
            #expect((26...32).contains(tokens.count), "\(tokens.count) tokens")
        }
    }
}
