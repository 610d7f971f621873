import BeckonProtocol
import APNSCore
import BeckonDelivery
import Foundation
import XCTest

/// When the planner pushes nothing, and the high-urgency rule.
final class DevicePlannerTests: XCTestCase {
    func testConnectedDeviceGetsNoPushForMessages() {
        let harness = PlannerHarness()
        harness.connect(at: 0)
        XCTAssertEqual(harness.arrive(message("m1"), at: 1), [])
        XCTAssertEqual(harness.arrive(message("m2", urgency: .high), at: 2), [])
        XCTAssertNil(harness.deadline)
    }

    func testLowUrgencyAndReceiptsAreNotPushed() {
        let harness = PlannerHarness()
        XCTAssertEqual(harness.arrive(message("m1", urgency: .low), at: 0), [])
        XCTAssertEqual(harness.arrive(message("r1", kind: .receipt), at: 1), [])
        XCTAssertEqual(harness.arrive(message("r2", kind: .receipt, urgency: .high), at: 2), [], "receipts never alert")
        XCTAssertNil(harness.deadline)
    }

    func testNoTokenOrExpiredMessageIsNotPushed() {
        let harness = PlannerHarness(device: PlannerDevice(hasRemoteToken: false))
        XCTAssertEqual(harness.arrive(message("m1"), at: 0), [])
        harness.device = .wake
        XCTAssertEqual(harness.arrive(message("m2", expiresAt: at(5)), at: 5), [])
    }

    func testHighUrgencyAlertsAtOnceEvenUnderWake() throws {
        let harness = PlannerHarness()
        let push = try onlyPush(
            harness.arrive(
                message("m1", urgency: .high, hints: NotificationHints(title: "Secret", threadID: "t1"), unread: 4),
                at: 0
            )
        )
        XCTAssertEqual(push.reason, .urgentAlert)
        XCTAssertEqual(push.strategy, .wake)
        XCTAssertEqual(push.token, .remote)
        XCTAssertEqual(push.id, pushID(1))
        XCTAssertEqual(
            try headers(push),
            [
                "apns-push-type": "alert", "apns-topic": bundleID, "apns-priority": "10",
                "apns-id": "00000000-0000-0000-0000-000000000001", "apns-collapse-id": "m1",
                "apns-expiration": epoch(86_400),
            ]
        )
        // Generic text (rule 1: the wake strategy never puts content on the wire); it still wakes the app.
        try assertPayload(
            push,
            [
                "aps": [
                    "alert": ["loc-key": "BECKON_NEW_MESSAGE"], "badge": 4, "sound": "default", "thread-id": "t1",
                    "content-available": 1,
                ],
                "beckon": ["reason": "urgent-alert", "ids": ["m1"]],
            ]
        )
        XCTAssertNil(harness.deadline, "an alert starts no reconnect window")
    }

    func testExpirationNeverOutlivesTheMessage() throws {
        let harness = PlannerHarness(policy: DeliveryPolicy(strategy: .serviceExtension), device: .serviceExtension)
        let push = try onlyPush(harness.arrive(message("m1", expiresAt: at(600)), at: 0))
        XCTAssertEqual(push.notification.expiration, .at(at(600)))
        XCTAssertEqual(try headers(push)["apns-expiration"], epoch(600))
    }
}
