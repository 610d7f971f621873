import BeckonProtocol
import APNSCore
import BeckonDelivery
import Foundation
import XCTest

/// Rule 3: at most N background pushes per sliding hour; the rest coalesce into one owed push.
final class ThrottleTests: XCTestCase {
    /// Three wakes at 0, 100 and 200 s, each answered by a short connection.
    private func spendTheHour(_ harness: PlannerHarness) throws {
        for (index, start) in [0.0, 100, 200].enumerated() {
            let push = try onlyPush(harness.arrive(message("m\(index + 1)"), at: start))
            XCTAssertEqual(push.reason, .wake)
            harness.connect(at: start + 5)
            harness.disconnect(at: start + 10)
        }
    }

    func testFourthWakeInAnHourIsOwedAndCoalescedIntoOne() throws {
        var policy = DeliveryPolicy()
        policy.throttledAlertDelay = nil
        let harness = PlannerHarness(policy: policy)
        try spendTheHour(harness)

        XCTAssertEqual(harness.arrive(message("m4"), at: 300), [])
        XCTAssertEqual(harness.arrive(message("m5"), at: 400), [])
        XCTAssertEqual(harness.arrive(message("m6"), at: 500), [])
        XCTAssertEqual(harness.deadline, 3600, "when the first wake leaves the window")
        XCTAssertEqual(harness.tick(at: 3599), [])

        let owed = try onlyPush(harness.tick(at: 3600))
        XCTAssertEqual(owed.reason, .wake)
        XCTAssertEqual(owed.messageIDs, ["m4", "m5", "m6"])
        try assertPayload(owed, ["aps": ["content-available": 1], "beckon": ["reason": "wake", "ids": ["m4", "m5", "m6"]]])
        XCTAssertEqual(harness.deadline, 3660, "the owed wake is watched like any other")
        XCTAssertEqual(harness.issued, 4, "one push for three messages")
    }

    func testOwedWakeTooLongBecomesOneAlert() throws {
        let harness = PlannerHarness()  // throttledAlertDelay 900 s
        try spendTheHour(harness)
        harness.arrive(message("m4", unread: 4), at: 300)
        harness.arrive(message("m5", unread: 5), at: 400)
        XCTAssertEqual(harness.deadline, 1200)
        let alert = try onlyPush(harness.tick(at: 1200))
        XCTAssertEqual(alert.reason, .throttledAlert)
        XCTAssertEqual(alert.messageIDs, ["m4", "m5"])
        XCTAssertEqual(try path(payload(alert), "aps.content-available") as? Int, 1)
        XCTAssertEqual(try path(payload(alert), "aps.badge") as? Int, 5)
        XCTAssertNil(harness.deadline, "nothing owed any more")
    }

    func testConnectingDropsTheOwedWake() throws {
        let harness = PlannerHarness()
        try spendTheHour(harness)
        harness.arrive(message("m4"), at: 300)
        harness.connect(at: 320)
        XCTAssertNil(harness.deadline)
        XCTAssertEqual(harness.run(until: 10_000), [])
    }

    func testSlidingWindowFreesOneSlotAtATime() throws {
        var policy = DeliveryPolicy()
        policy.throttledAlertDelay = nil
        let harness = PlannerHarness(policy: policy)
        try spendTheHour(harness)
        harness.arrive(message("m4"), at: 300)
        XCTAssertEqual(harness.tick(at: 3600).count, 1)
        harness.connect(at: 3605)
        harness.disconnect(at: 3610)
        // The 100 s wake is still in the window until 3700.
        XCTAssertEqual(harness.arrive(message("m5"), at: 3650), [])
        XCTAssertEqual(harness.deadline, 3700)
        XCTAssertEqual(try onlyPush(harness.tick(at: 3700)).messageIDs, ["m5"])
    }

    func testAnOwedWakeCarriesOnlyTheNewestIDsAndStillFits() throws {
        var policy = DeliveryPolicy()
        policy.throttledAlertDelay = nil
        let harness = PlannerHarness(policy: policy)
        try spendTheHour(harness)
        let longID = { (n: Int) in String(format: "00000000-0000-4000-8000-%012d", n) }
        for n in 1...60 { harness.arrive(message(longID(n)), at: 300 + Double(n)) }
        let owed = try onlyPush(harness.tick(at: 3600))
        XCTAssertEqual(owed.messageIDs, (41...60).map(longID))
        XCTAssertLessThanOrEqual(try request(owed).payload.count, 4096)
    }
}
