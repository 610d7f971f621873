import BeckonProtocol
import APNSCore
import BeckonDelivery
import Foundation
import Testing

/// When the planner pushes nothing, and the high-urgency rule.
@Suite struct DevicePlannerTests {
    @Test func connectedDeviceGetsNoPushForMessages() {
        let harness = PlannerHarness()
        harness.connect(at: 0)
        #expect(harness.arrive(message("m1"), at: 1) == [])
        #expect(harness.arrive(message("m2", urgency: .high), at: 2) == [])
        #expect(harness.deadline == nil)
    }

    @Test func lowUrgencyAndReceiptsAreNotPushed() {
        let harness = PlannerHarness()
        #expect(harness.arrive(message("m1", urgency: .low), at: 0) == [])
        #expect(harness.arrive(message("r1", kind: .receipt), at: 1) == [])
        #expect(harness.arrive(message("r2", kind: .receipt, urgency: .high), at: 2) == [], "receipts never alert")
        #expect(harness.deadline == nil)
    }

    @Test func noTokenOrExpiredMessageIsNotPushed() {
        let harness = PlannerHarness(device: PlannerDevice(hasRemoteToken: false))
        #expect(harness.arrive(message("m1"), at: 0) == [])
        harness.device = .wake
        #expect(harness.arrive(message("m2", expiresAt: at(5)), at: 5) == [])
    }

    @Test func highUrgencyAlertsAtOnceEvenUnderWake() throws {
        let harness = PlannerHarness()
        let push = try onlyPush(
            harness.arrive(
                message("m1", urgency: .high, hints: NotificationHints(title: "Secret", threadID: "t1"), unread: 4),
                at: 0
            )
        )
        #expect(push.reason == .urgentAlert)
        #expect(push.strategy == .wake)
        #expect(push.token == .remote)
        #expect(push.id == pushID(1))
        #expect(
            try headers(push) == [
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
        #expect(harness.deadline == nil, "an alert starts no reconnect window")
    }

    @Test func expirationNeverOutlivesTheMessage() throws {
        let harness = PlannerHarness(policy: DeliveryPolicy(strategy: .serviceExtension), device: .serviceExtension)
        let push = try onlyPush(harness.arrive(message("m1", expiresAt: at(600)), at: 0))
        #expect(push.notification.expiration == .at(at(600)))
        #expect(try headers(push)["apns-expiration"] == epoch(600))
    }
}
