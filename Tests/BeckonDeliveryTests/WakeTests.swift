import BeckonProtocol
import APNSCore
import BeckonDelivery
import Foundation
import XCTest

/// Rules 3 and 4 under the `wake` strategy: background push, watch, escalate; rule 10: measure.
final class WakeTests: XCTestCase {
    func testWakeIsABackgroundPushWithIDsOnly() throws {
        let harness = PlannerHarness()
        let push = try onlyPush(harness.arrive(message("m1", hints: NotificationHints(title: "Hi")), at: 0))
        XCTAssertEqual(push.reason, .wake)
        XCTAssertEqual(push.strategy, .wake)
        XCTAssertEqual(push.messageIDs, ["m1"])
        XCTAssertEqual(
            try headers(push),
            [
                "apns-push-type": "background", "apns-topic": bundleID, "apns-priority": "5",
                "apns-id": "00000000-0000-0000-0000-000000000001", "apns-expiration": epoch(3600),
            ]
        )
        try assertPayload(push, ["aps": ["content-available": 1], "beckon": ["reason": "wake", "ids": ["m1"]]])
        XCTAssertEqual(harness.deadline, 60, "the reconnect window")
    }

    func testReconnectWithinWindowIsObservedWithLatencyAndNoAlert() throws {
        let harness = PlannerHarness()
        harness.arrive(message("m1"), at: 0)
        XCTAssertEqual(
            harness.connect(at: 12.5),
            [.wakeObserved(pushID: pushID(1), reason: .wake, strategy: .wake, latency: 12.5)]
        )
        XCTAssertNil(harness.deadline)
        XCTAssertEqual(harness.tick(at: 60), [])
        XCTAssertEqual(harness.run(until: 10_000), [])
        XCTAssertFalse(harness.planner.isUnreachable)
    }

    func testMessagesDuringAWakeJoinItInsteadOfSpendingAnother() throws {
        let harness = PlannerHarness()
        harness.arrive(message("m1"), at: 0)
        XCTAssertEqual(harness.arrive(message("m2"), at: 10), [])
        XCTAssertEqual(harness.deadline, 60)
    }

    func testNoReconnectEscalatesToAlertsUntilTheDeviceReturns() throws {
        let harness = PlannerHarness()
        harness.arrive(message("m1", unread: 1), at: 0)
        harness.arrive(message("m2", unread: 2), at: 10)
        XCTAssertEqual(harness.tick(at: 59), [], "not yet")

        let actions = harness.tick(at: 60)
        XCTAssertEqual(actions.count, 3)
        XCTAssertEqual(actions[0], .wakeMissed(pushID: pushID(1), reason: .wake, strategy: .wake))
        XCTAssertEqual(actions[1], .becameUnreachable)
        let escalation = try onlyPush(actions)
        XCTAssertEqual(escalation.reason, .unreachableAlert)
        XCTAssertEqual(escalation.messageIDs, ["m1", "m2"])
        XCTAssertEqual(try headers(escalation)["apns-push-type"], "alert")
        XCTAssertEqual(try headers(escalation)["apns-priority"], "10")
        XCTAssertEqual(try headers(escalation)["apns-collapse-id"], "m2")
        try assertPayload(
            escalation,
            [
                "aps": [
                    "alert": ["loc-key": "BECKON_NEW_MESSAGE"], "badge": 2, "sound": "default", "content-available": 1,
                ],
                "beckon": ["reason": "unreachable-alert", "ids": ["m1", "m2"]],
            ]
        )
        XCTAssertTrue(harness.planner.isUnreachable)
        XCTAssertNil(harness.deadline)

        // Unreachable: the next message is an alert that still carries content-available, at once.
        let next = try onlyPush(harness.arrive(message("m3", unread: 3), at: 100))
        XCTAssertEqual(next.reason, .unreachableAlert)
        XCTAssertEqual(try path(payload(next), "aps.content-available") as? Int, 1)
        XCTAssertEqual(try path(payload(next), "aps.alert.loc-key") as? String, "BECKON_NEW_MESSAGE")

        // The device comes back: reachable again; the missed wake is not credited, the alerts are.
        XCTAssertEqual(
            harness.connect(at: 130),
            [
                .wakeObserved(pushID: pushID(2), reason: .unreachableAlert, strategy: .wake, latency: 70),
                .wakeObserved(pushID: pushID(3), reason: .unreachableAlert, strategy: .wake, latency: 30),
                .becameReachable,
            ]
        )
        harness.disconnect(at: 140)
        let wakeAgain = try onlyPush(harness.arrive(message("m4"), at: 150))
        XCTAssertEqual(wakeAgain.reason, .wake)
        XCTAssertEqual(wakeAgain.notification.pushType, .background)
    }

    func testWithNSEEscalationAlertIsMutable() throws {
        let harness = PlannerHarness(device: .serviceExtension)
        harness.arrive(message("m1"), at: 0)
        let escalation = try onlyPush(harness.tick(at: 60))
        XCTAssertEqual(try path(payload(escalation), "aps.mutable-content") as? Int, 1)
    }

    func testMessageReadBeforeTheWindowEndsIsNotAlerted() throws {
        let harness = PlannerHarness()
        harness.arrive(message("m1"), at: 0)
        let clear = try onlyPush(harness.read(["m1"], unread: 0, at: 5))
        XCTAssertEqual(clear.reason, .clear)
        XCTAssertEqual(
            harness.tick(at: 60),
            [.wakeMissed(pushID: pushID(1), reason: .wake, strategy: .wake), .becameUnreachable]
        )
    }

    func testMeasuredPushesAreCapped() {
        var policy = DeliveryPolicy(strategy: .serviceExtension)
        policy.measuredPushLimit = 2
        let harness = PlannerHarness(policy: policy, device: .serviceExtension)
        for index in 1...5 { harness.arrive(message("m\(index)"), at: TimeInterval(index)) }
        XCTAssertEqual(
            harness.connect(at: 10),
            [
                .wakeObserved(pushID: pushID(4), reason: .alert, strategy: .serviceExtension, latency: 6),
                .wakeObserved(pushID: pushID(5), reason: .alert, strategy: .serviceExtension, latency: 5),
            ]
        )
    }

    func testAFailedWakeIsNeitherMeasuredNorEscalated() throws {
        let harness = PlannerHarness()
        harness.arrive(message("m1"), at: 0)
        XCTAssertEqual(harness.planner.pushFailed(pushID: pushID(1), now: at(1)), [])
        XCTAssertNil(harness.deadline)
        XCTAssertEqual(harness.tick(at: 60), [])
        XCTAssertFalse(harness.planner.isUnreachable)
        XCTAssertEqual(harness.connect(at: 70), [])
    }
}
