import BeckonProtocol
import APNSCore
import BeckonDelivery
import Foundation
import Testing

/// Rule 5: a dropped connection with unacknowledged messages is re-pushed with backoff and a cap.
@Suite struct RepushTests {
    private func droppedWithUnacked(_ harness: PlannerHarness) {
        harness.connect(at: 0)
        harness.arrive(message("m1", unread: 1), at: 1)
        harness.arrive(message("m2", unread: 2), at: 2)
        harness.disconnect(at: 10, unacked: ["m1", "m2"], clean: false)
    }

    @Test func backoffAndCap() throws {
        let harness = PlannerHarness(policy: DeliveryPolicy(strategy: .serviceExtension), device: .serviceExtension)
        droppedWithUnacked(harness)
        #expect(harness.deadline == 40)
        let sent = pushes(harness.run(until: 100_000))
        #expect(sent.map(\.plannedAt) == [40, 100, 220, 460].map(at), "30, 60, 120, 240 s apart; 4 at most")
        #expect(Set(sent.map(\.reason)) == [.repush])
        #expect(Set(sent.map(\.messageIDs)) == [["m1", "m2"]])
        #expect(Set(sent.compactMap(\.notification.collapseID)) == ["m1"], "each replaces the last (rule 11)")
        try assertPayload(
            sent[0],
            [
                "aps": [
                    "alert": ["loc-key": "BECKON_NEW_MESSAGE"], "badge": 2, "sound": "default", "mutable-content": 1,
                ],
                "beckon": ["reason": "repush", "ids": ["m1", "m2"]],
            ]
        )
        #expect(try path(payload(sent[1]), "aps.sound") == nil, "only the first re-push sounds")
        #expect(harness.deadline == nil)
    }

    @Test func reconnectCancels() throws {
        let harness = PlannerHarness(policy: DeliveryPolicy(strategy: .serviceExtension), device: .serviceExtension)
        droppedWithUnacked(harness)
        harness.tick(at: 40)
        #expect(
            harness.connect(at: 45)
                == [.wakeObserved(pushID: pushID(1), reason: .repush, strategy: .serviceExtension, latency: 5)]
        )
        #expect(harness.deadline == nil)
        #expect(harness.run(until: 100_000) == [])
    }

    @Test func acknowledgementNarrowsAndCancels() throws {
        let harness = PlannerHarness(policy: DeliveryPolicy(strategy: .serviceExtension), device: .serviceExtension)
        droppedWithUnacked(harness)
        _ = harness.planner.acknowledged(remainingUnackedIDs: ["m2"], now: at(20))
        #expect(try onlyPush(harness.tick(at: 40)).messageIDs == ["m2"])
        _ = harness.planner.acknowledged(remainingUnackedIDs: [], now: at(50))
        #expect(harness.deadline == nil)
    }

    @Test func nothingUnackedSchedulesNothing() {
        let harness = PlannerHarness()
        harness.connect(at: 0)
        harness.disconnect(at: 10, unacked: [], clean: true)
        #expect(harness.deadline == nil)
        harness.connect(at: 20)
        harness.disconnect(at: 30, unacked: [], clean: false)
        #expect(harness.deadline == nil)
    }

    @Test func messagesThatCrossedAByeArePushedAtOnce() throws {
        let harness = PlannerHarness()
        harness.connect(at: 0)
        harness.disconnect(at: 10, unacked: ["m1"], clean: true)
        #expect(harness.deadline == 10)
        let repush = try onlyPush(harness.tick(at: 10))
        #expect(repush.reason == .repush)
        #expect(repush.messageIDs == ["m1"])
    }

    @Test func wakeStrategyRepushIsAThrottledBackgroundPush() throws {
        var policy = DeliveryPolicy()
        policy.backgroundPushesPerHour = 1
        policy.throttledAlertDelay = nil
        let harness = PlannerHarness(policy: policy)
        droppedWithUnacked(harness)
        let repush = try onlyPush(harness.tick(at: 40))
        #expect(repush.reason == .repush)
        try assertPayload(repush, ["aps": ["content-available": 1], "beckon": ["reason": "repush", "ids": ["m1", "m2"]]])
        #expect(harness.connect(at: 50).count == 1)
        // The budget of one is spent: the next drop's re-push waits for the slot.
        harness.disconnect(at: 60, unacked: ["m3"], clean: false)
        #expect(harness.run(until: 3639) == [], "re-pushes at 90, 150, 270, 510 s coalesce into one owed wake")
        #expect(harness.deadline == 3640)
        let owed = try onlyPush(harness.run(until: 3640))
        #expect(owed.messageIDs == ["m3"])
        #expect(owed.reason == .repush)
    }
}
