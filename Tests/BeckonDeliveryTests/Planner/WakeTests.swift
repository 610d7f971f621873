import BeckonProtocol
import APNSCore
import BeckonDelivery
import Foundation
import Testing

/// Rules 3 and 4 under the `wake` strategy: background push, watch, escalate; rule 10: measure.
@Suite struct WakeTests {
    @Test func wakeIsABackgroundPushWithIDsOnly() throws {
        let harness = PlannerHarness()
        let push = try onlyPush(harness.arrive(message("m1", hints: NotificationHints(title: "Hi")), at: 0))
        #expect(push.reason == .wake)
        #expect(push.strategy == .wake)
        #expect(push.messageIDs == ["m1"])
        #expect(
            try headers(push) == [
                "apns-push-type": "background", "apns-topic": bundleID, "apns-priority": "5",
                "apns-id": "00000000-0000-0000-0000-000000000001", "apns-expiration": epoch(3600),
            ]
        )
        try assertPayload(push, ["aps": ["content-available": 1], "beckon": ["reason": "wake", "ids": ["m1"]]])
        #expect(harness.deadline == 60, "the reconnect window")
    }

    @Test func reconnectWithinWindowIsObservedWithLatencyAndNoAlert() throws {
        let harness = PlannerHarness()
        harness.arrive(message("m1"), at: 0)
        #expect(
            harness.connect(at: 12.5) == [.wakeObserved(pushID: pushID(1), reason: .wake, strategy: .wake, latency: 12.5)]
        )
        #expect(harness.deadline == nil)
        #expect(harness.tick(at: 60) == [])
        #expect(harness.run(until: 10_000) == [])
        #expect(!harness.planner.isUnreachable)
    }

    @Test func messagesDuringAWakeJoinItInsteadOfSpendingAnother() throws {
        let harness = PlannerHarness()
        harness.arrive(message("m1"), at: 0)
        #expect(harness.arrive(message("m2"), at: 10) == [])
        #expect(harness.deadline == 60)
    }

    @Test func noReconnectEscalatesToAlertsUntilTheDeviceReturns() throws {
        let harness = PlannerHarness()
        harness.arrive(message("m1", unread: 1), at: 0)
        harness.arrive(message("m2", unread: 2), at: 10)
        #expect(harness.tick(at: 59) == [], "not yet")

        let actions = harness.tick(at: 60)
        #expect(actions.count == 3)
        #expect(actions[0] == .wakeMissed(pushID: pushID(1), reason: .wake, strategy: .wake))
        #expect(actions[1] == .becameUnreachable)
        let escalation = try onlyPush(actions)
        #expect(escalation.reason == .unreachableAlert)
        #expect(escalation.messageIDs == ["m1", "m2"])
        #expect(try headers(escalation)["apns-push-type"] == "alert")
        #expect(try headers(escalation)["apns-priority"] == "10")
        #expect(try headers(escalation)["apns-collapse-id"] == "m1", "the first unseen message's (rule 11)")
        try assertPayload(
            escalation,
            [
                "aps": [
                    "alert": ["loc-key": "BECKON_NEW_MESSAGE"], "badge": 2, "sound": "default", "content-available": 1,
                ],
                "beckon": ["reason": "unreachable-alert", "ids": ["m1", "m2"]],
            ]
        )
        #expect(harness.planner.isUnreachable)
        #expect(harness.deadline == nil)

        // Unreachable: the next message is an alert that still carries content-available, at once.
        let next = try onlyPush(harness.arrive(message("m3", unread: 3), at: 100))
        #expect(next.reason == .unreachableAlert)
        #expect(try path(payload(next), "aps.content-available") as? Int == 1)
        #expect(try path(payload(next), "aps.alert.loc-key") as? String == "BECKON_NEW_MESSAGE")

        // The device comes back: reachable again. The missed wake is not credited, nor the first
        // alert, whose reconnect window (60 s) ended before; the second alert's had not.
        #expect(
            harness.connect(at: 130) == [
                .wakeMissed(pushID: pushID(2), reason: .unreachableAlert, strategy: .wake),
                .wakeObserved(pushID: pushID(3), reason: .unreachableAlert, strategy: .wake, latency: 30),
                .becameReachable,
            ]
        )
        harness.disconnect(at: 140)
        let wakeAgain = try onlyPush(harness.arrive(message("m4"), at: 150))
        #expect(wakeAgain.reason == .wake)
        #expect(wakeAgain.notification.pushType == .background)
    }

    @Test func withNSEEscalationAlertIsMutable() throws {
        let harness = PlannerHarness(device: .serviceExtension)
        harness.arrive(message("m1"), at: 0)
        let escalation = try onlyPush(harness.tick(at: 60))
        #expect(try path(payload(escalation), "aps.mutable-content") as? Int == 1)
    }

    @Test func messageReadBeforeTheWindowEndsIsNotAlerted() throws {
        let harness = PlannerHarness()
        harness.arrive(message("m1"), at: 0)
        // Nothing unread any more, after a wake that may have shown it: badge 0 clears all.
        let clear = try onlyPush(harness.read(["m1"], unread: 0, at: 5))
        #expect(clear.reason == .clearAll)
        try assertPayload(clear, ["aps": ["badge": 0]])
        #expect(
            harness.tick(at: 60) == [.wakeMissed(pushID: pushID(1), reason: .wake, strategy: .wake), .becameUnreachable]
        )
    }

    @Test func measuredPushesAreCapped() {
        var policy = DeliveryPolicy(strategy: .serviceExtension)
        policy.measuredPushLimit = 2
        let harness = PlannerHarness(policy: policy, device: .serviceExtension)
        for index in 1...5 { harness.arrive(message("m\(index)"), at: TimeInterval(index)) }
        #expect(
            harness.connect(at: 10) == [
                .wakeObserved(pushID: pushID(4), reason: .alert, strategy: .serviceExtension, latency: 6),
                .wakeObserved(pushID: pushID(5), reason: .alert, strategy: .serviceExtension, latency: 5),
            ]
        )
    }

    @Test func aFailedWakeIsNeitherMeasuredNorEscalated() throws {
        let harness = PlannerHarness()
        harness.arrive(message("m1"), at: 0)
        #expect(harness.planner.pushFailed(pushID: pushID(1), now: at(1)) == [])
        #expect(harness.deadline == nil)
        #expect(harness.tick(at: 60) == [])
        #expect(!harness.planner.isUnreachable)
        #expect(harness.connect(at: 70) == [])
    }
}
