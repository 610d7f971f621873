import BeckonProtocol
import APNSCore
import BeckonDelivery
import Foundation
import Testing

/// Rule 3: at most N background pushes per sliding hour; the rest coalesce into one owed push.
@Suite struct ThrottleTests {
    /// Three wakes at 0, 100 and 200 s, each answered by a short connection.
    private func spendTheHour(_ harness: PlannerHarness) throws {
        for (index, start) in [0.0, 100, 200].enumerated() {
            let push = try onlyPush(harness.arrive(message("m\(index + 1)"), at: start))
            #expect(push.reason == .wake)
            harness.connect(at: start + 5)
            harness.disconnect(at: start + 10)
        }
    }

    @Test func fourthWakeInAnHourIsOwedAndCoalescedIntoOne() throws {
        var policy = DeliveryPolicy()
        policy.throttledAlertDelay = nil
        let harness = PlannerHarness(policy: policy)
        try spendTheHour(harness)

        #expect(harness.arrive(message("m4"), at: 300) == [])
        #expect(harness.arrive(message("m5"), at: 400) == [])
        #expect(harness.arrive(message("m6"), at: 500) == [])
        #expect(harness.deadline == 3600, "when the first wake leaves the window")
        #expect(harness.tick(at: 3599) == [])

        let owed = try onlyPush(harness.tick(at: 3600))
        #expect(owed.reason == .wake)
        #expect(owed.messageIDs == ["m4", "m5", "m6"])
        try assertPayload(owed, ["aps": ["content-available": 1], "beckon": ["reason": "wake", "ids": ["m4", "m5", "m6"]]])
        #expect(harness.deadline == 3660, "the owed wake is watched like any other")
        #expect(harness.issued == 4, "one push for three messages")
    }

    @Test func owedWakeTooLongBecomesOneAlert() throws {
        let harness = PlannerHarness()  // the default policy: throttledAlertDelay 60 s
        try spendTheHour(harness)
        harness.arrive(message("m4", unread: 4), at: 300)
        harness.arrive(message("m5", unread: 5), at: 330)
        // On screen within about the reconnect window, not when the hour's budget frees.
        #expect(harness.deadline == 360)
        let alert = try onlyPush(harness.tick(at: 360))
        #expect(alert.reason == .throttledAlert)
        #expect(alert.messageIDs == ["m4", "m5"])
        #expect(try path(payload(alert), "aps.content-available") as? Int == 1)
        #expect(try path(payload(alert), "aps.badge") as? Int == 5)
        #expect(harness.deadline == nil, "nothing owed any more")
    }

    @Test func connectingDropsTheOwedWake() throws {
        let harness = PlannerHarness()
        try spendTheHour(harness)
        harness.arrive(message("m4"), at: 300)
        harness.connect(at: 320)
        #expect(harness.deadline == nil)
        #expect(harness.run(until: 10_000) == [])
    }

    @Test func slidingWindowFreesOneSlotAtATime() throws {
        var policy = DeliveryPolicy()
        policy.throttledAlertDelay = nil
        let harness = PlannerHarness(policy: policy)
        try spendTheHour(harness)
        harness.arrive(message("m4"), at: 300)
        #expect(harness.tick(at: 3600).count == 1)
        harness.connect(at: 3605)
        harness.disconnect(at: 3610)
        // The 100 s wake is still in the window until 3700.
        #expect(harness.arrive(message("m5"), at: 3650) == [])
        #expect(harness.deadline == 3700)
        #expect(try onlyPush(harness.tick(at: 3700)).messageIDs == ["m5"])
    }

    @Test func anOwedWakeCarriesOnlyTheNewestIDsAndStillFits() throws {
        var policy = DeliveryPolicy()
        policy.throttledAlertDelay = nil
        let harness = PlannerHarness(policy: policy)
        try spendTheHour(harness)
        let longID = { (n: Int) in String(format: "00000000-0000-4000-8000-%012d", n) }
        for n in 1...60 { harness.arrive(message(longID(n)), at: 300 + Double(n)) }
        let owed = try onlyPush(harness.tick(at: 3600))
        #expect(owed.messageIDs == (41...60).map(longID))
        #expect(try request(owed).payload.count <= 4096)
    }
}
