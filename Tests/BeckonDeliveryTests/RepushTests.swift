import BeckonProtocol
import APNSCore
import BeckonDelivery
import Foundation
import XCTest

/// Rule 5: a dropped connection with unacknowledged messages is re-pushed with backoff and a cap.
final class RepushTests: XCTestCase {
    private func droppedWithUnacked(_ harness: PlannerHarness) {
        harness.connect(at: 0)
        harness.arrive(message("m1", unread: 1), at: 1)
        harness.arrive(message("m2", unread: 2), at: 2)
        harness.disconnect(at: 10, unacked: ["m1", "m2"], clean: false)
    }

    func testBackoffAndCap() throws {
        let harness = PlannerHarness(policy: DeliveryPolicy(strategy: .serviceExtension), device: .serviceExtension)
        droppedWithUnacked(harness)
        XCTAssertEqual(harness.deadline, 40)
        let sent = pushes(harness.run(until: 100_000))
        XCTAssertEqual(sent.map(\.plannedAt), [40, 100, 220, 460].map(at), "30, 60, 120, 240 s apart; 4 at most")
        XCTAssertEqual(Set(sent.map(\.reason)), [.repush])
        XCTAssertEqual(Set(sent.map(\.messageIDs)), [["m1", "m2"]])
        XCTAssertEqual(Set(sent.compactMap(\.notification.collapseID)), ["m2"], "each replaces the last")
        try assertPayload(
            sent[0],
            [
                "aps": [
                    "alert": ["loc-key": "BECKON_NEW_MESSAGE"], "badge": 2, "sound": "default", "mutable-content": 1,
                ],
                "beckon": ["reason": "repush", "ids": ["m1", "m2"]],
            ]
        )
        XCTAssertNil(try path(payload(sent[1]), "aps.sound"), "only the first re-push sounds")
        XCTAssertNil(harness.deadline)
    }

    func testReconnectCancels() throws {
        let harness = PlannerHarness(policy: DeliveryPolicy(strategy: .serviceExtension), device: .serviceExtension)
        droppedWithUnacked(harness)
        harness.tick(at: 40)
        XCTAssertEqual(
            harness.connect(at: 45),
            [.wakeObserved(pushID: pushID(1), reason: .repush, strategy: .serviceExtension, latency: 5)]
        )
        XCTAssertNil(harness.deadline)
        XCTAssertEqual(harness.run(until: 100_000), [])
    }

    func testAcknowledgementNarrowsAndCancels() throws {
        let harness = PlannerHarness(policy: DeliveryPolicy(strategy: .serviceExtension), device: .serviceExtension)
        droppedWithUnacked(harness)
        _ = harness.planner.acknowledged(remainingUnackedIDs: ["m2"], now: at(20))
        XCTAssertEqual(try onlyPush(harness.tick(at: 40)).messageIDs, ["m2"])
        _ = harness.planner.acknowledged(remainingUnackedIDs: [], now: at(50))
        XCTAssertNil(harness.deadline)
    }

    func testCleanDisconnectOrNothingUnackedSchedulesNothing() {
        let harness = PlannerHarness()
        harness.connect(at: 0)
        harness.disconnect(at: 10, unacked: ["m1"], clean: true)
        XCTAssertNil(harness.deadline)
        harness.connect(at: 20)
        harness.disconnect(at: 30, unacked: [], clean: false)
        XCTAssertNil(harness.deadline)
    }

    func testWakeStrategyRepushIsAThrottledBackgroundPush() throws {
        var policy = DeliveryPolicy()
        policy.backgroundPushesPerHour = 1
        policy.throttledAlertDelay = nil
        let harness = PlannerHarness(policy: policy)
        droppedWithUnacked(harness)
        let repush = try onlyPush(harness.tick(at: 40))
        XCTAssertEqual(repush.reason, .repush)
        try assertPayload(repush, ["aps": ["content-available": 1], "beckon": ["reason": "repush", "ids": ["m1", "m2"]]])
        XCTAssertEqual(harness.connect(at: 50).count, 1)
        // The budget of one is spent: the next drop's re-push waits for the slot.
        harness.disconnect(at: 60, unacked: ["m3"], clean: false)
        XCTAssertEqual(harness.run(until: 3639), [], "re-pushes at 90, 150, 270, 510 s coalesce into one owed wake")
        XCTAssertEqual(harness.deadline, 3640)
        let owed = try onlyPush(harness.run(until: 3640))
        XCTAssertEqual(owed.messageIDs, ["m3"])
        XCTAssertEqual(owed.reason, .repush)
    }
}
