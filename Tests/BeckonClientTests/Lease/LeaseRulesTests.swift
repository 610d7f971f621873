import BeckonClient
import BeckonClientTestSupport
import Testing

/// The lease's decisions alone (docs/design.md, "A lease, not a held file lock").
@Suite struct LeaseRulesTests {
    let app = LeaseHolder(role: .app, instance: "a")
    let nse1 = LeaseHolder(role: .extension, instance: "1")
    let nse2 = LeaseHolder(role: .extension, instance: "2")

    func take(_ row: LeaseRow?, _ holder: LeaseHolder, now: Int64 = 1000, waiter: Bool = false) -> (LeaseRow, Bool)? {
        guard case .take(let row, let preemption) = LeaseRules.take(
            row, key: "k", by: holder, now: now, duration: 500, olderWaiterAlive: waiter)
        else { return nil }
        return (row, preemption)
    }

    @Test func theFirstTakerGetsGenerationOne() throws {
        let (row, preemption) = try #require(take(nil, nse1))
        #expect(row.holder == nse1.name && row.generation == 1 && row.expiresAt == 1500 && !preemption)
    }

    @Test func aHeldLeaseIsBusyForOthersUntilItExpires() throws {
        let (held, _) = try #require(take(nil, nse1))
        #expect(take(held, nse2, now: 1400) == nil)
        #expect(take(held, app, now: 1400) == nil)
        let (taken, _) = try #require(take(held, nse2, now: 1501))
        #expect(taken.holder == nse2.name)
        #expect(taken.generation == 2, "another holder took over: caches elsewhere are stale")
    }

    @Test func theHolderRenewsEvenAfterExpiryIfNobodyTookIt() throws {
        let (held, _) = try #require(take(nil, nse1))
        let (renewed, _) = try #require(take(held, nse1, now: 5000))
        #expect(renewed.expiresAt == 5500 && renewed.generation == 1)
    }

    @Test func retakingAfterReleaseKeepsTheGenerationForTheSameHolder() throws {
        let (held, _) = try #require(take(nil, nse1))
        let released = try #require(LeaseRules.release(held, by: nse1))
        #expect(released.holder == nil)
        let (again, _) = try #require(take(released, nse1, now: 1100))
        #expect(again.generation == 1)
        let (other, _) = try #require(take(again.with(holder: nil), nse2, now: 1200))
        #expect(other.generation == 2)
    }

    @Test func onlyTheHolderReleases() throws {
        let (held, _) = try #require(take(nil, nse1))
        #expect(LeaseRules.release(held, by: nse2) == nil)
    }

    @Test func theAppsRequestReachesTheHolderAtRenewalAndReservesTheLease() throws {
        let (held, _) = try #require(take(nil, nse1))
        let wanted = try #require(LeaseRules.request(held, by: app, now: 1100, until: 2100))
        let (renewed, preemption) = try #require(take(wanted, nse1, now: 1150))
        #expect(preemption, "the holder learns it must yield")
        let released = try #require(LeaseRules.release(renewed, by: nse1))
        #expect(take(released, nse2, now: 1200) == nil, "reserved for the app")
        let (taken, _) = try #require(take(released, app, now: 1200))
        #expect(taken.holder == app.name && taken.wantedBy == nil && taken.generation == 2)
    }

    @Test func aLapsedRequestReservesNothing() throws {
        let (held, _) = try #require(take(nil, nse1))
        let wanted = try #require(LeaseRules.request(held, by: app, now: 1100, until: 1200))
        let released = try #require(LeaseRules.release(wanted, by: nse1))
        #expect(take(released, nse2, now: 1300) != nil)
    }

    @Test func extensionsDoNotRequest() throws {
        let (held, _) = try #require(take(nil, app))
        #expect(LeaseRules.request(held, by: nse1, now: 1100, until: 2000) == nil)
    }

    @Test func anExtensionWaitsBehindAnOlderWaiterTheAppDoesNot() throws {
        let free = LeaseRow(key: "k", holder: nil, lastHolder: nil, expiresAt: 0, generation: 3)
        #expect(take(free, nse2, waiter: true) == nil)
        #expect(take(free, nse2, waiter: false) != nil)
        #expect(take(free, app, waiter: true) != nil)
    }
}

extension LeaseRow {
    func with(holder: String?) -> LeaseRow {
        var row = self
        row.holder = holder
        return row
    }
}
