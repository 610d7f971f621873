@testable import BeckonServer
import Foundation
import Testing

@Suite struct RateLimitTableTests {
    let start = Date(timeIntervalSince1970: 1_000_000)

    @Test func aBurstThenTheSustainedRate() {
        var table = RateLimitTable(rate: 2, burst: 3)
        for _ in 0..<3 { #expect(table.take("a", now: start) == .allowed) }
        #expect(table.take("a", now: start) == .limited(retryAfter: 0.5))
        // Half a second gives one token back at 2 a second.
        #expect(table.take("a", now: start + 0.5) == .allowed)
        #expect(table.take("a", now: start + 0.5) != .allowed)
        // Keys are independent.
        #expect(table.take("b", now: start) == .allowed)
    }

    @Test func eachOfSeveralNodesAllowsItsShare() {
        var table = RateLimitTable(rate: 10, burst: 10)
        // Two live nodes: this one allows half the burst and half the rate.
        for _ in 0..<5 { #expect(table.take("app", now: start, share: 2) == .allowed) }
        #expect(table.take("app", now: start, share: 2) == .limited(retryAfter: 0.2))
        #expect(table.take("app", now: start + 0.2, share: 2) == .allowed)
        // More nodes than the burst: each still lets one request through.
        var small = RateLimitTable(rate: 1, burst: 2)
        #expect(small.take("app", now: start, share: 5) == .allowed)
        #expect(small.take("app", now: start, share: 5) != .allowed)
    }

    @Test func refusedRequestsDoNotTakeTokens() {
        var table = RateLimitTable(rate: 1, burst: 1)
        #expect(table.take("a", now: start) == .allowed)
        for step in 1...9 { _ = table.take("a", now: start + Double(step) * 0.1) }
        #expect(table.take("a", now: start + 1) == .allowed)
    }

    @Test func theTableStaysWithinItsCapacity() {
        var table = RateLimitTable(rate: 1, burst: 5, capacity: 100)
        for index in 0..<1_000 { _ = table.take("k\(index)", now: start + Double(index) * 0.001) }
        #expect(table.count <= 100)
        // A bucket that was just used is kept: its debt is not forgotten.
        for _ in 0..<4 { _ = table.take("busy", now: start + 2) }
        for index in 0..<99 { _ = table.take("x\(index)", now: start + 2) }
        #expect(table.take("busy", now: start + 2) == .allowed)
        #expect(table.take("busy", now: start + 2) != .allowed)
    }
}
