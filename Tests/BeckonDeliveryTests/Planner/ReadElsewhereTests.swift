import BeckonProtocol
import APNSCore
import BeckonDelivery
import Foundation
import Testing

/// Rule 7: read on one device, cleared on the others.
@Suite struct ReadElsewhereTests {
    @Test func offlineDeviceGetsAClearPush() throws {
        let harness = PlannerHarness()
        let push = try onlyPush(harness.read(["m1", "m2"], unread: 0, at: 0))
        #expect(push.reason == .clear)
        #expect(push.messageIDs == ["m1", "m2"])
        #expect(
            try headers(push) == [
                "apns-push-type": "background", "apns-topic": bundleID, "apns-priority": "5",
                "apns-id": "00000000-0000-0000-0000-000000000001", "apns-expiration": epoch(3600),
            ]
        )
        try assertPayload(
            push, ["aps": ["content-available": 1], "beckon": ["reason": "clear", "clear": ["m1", "m2"], "badge": 0]]
        )
        #expect(harness.deadline == nil, "a clear push starts no reconnect window")
        #expect(
            harness.connect(at: 20) == [.wakeObserved(pushID: pushID(1), reason: .clear, strategy: .wake, latency: 20)]
        )
    }

    @Test func connectedDeviceGetsNoPush() {
        let harness = PlannerHarness()
        harness.connect(at: 0)
        #expect(harness.read(["m1"], unread: 0, at: 1) == [])
        #expect(harness.planner.unreadCount == 0)
    }

    @Test func alertStrategiesClearWithABackgroundPushToo() throws {
        let harness = PlannerHarness(policy: DeliveryPolicy(strategy: .serviceExtension), device: .serviceExtension)
        #expect(try onlyPush(harness.read(["m1"], unread: 3, at: 0)).notification.pushType == .background)
    }

    @Test func throttledClearsAreMergedIntoOnePush() throws {
        let harness = PlannerHarness()
        for index in 1...3 { #expect(pushes(harness.read(["m\(index)"], unread: 9, at: Double(index))).count == 1) }
        #expect(harness.read(["m4"], unread: 8, at: 10) == [])
        #expect(harness.read(["m5", "m4"], unread: 7, at: 20) == [])
        #expect(harness.deadline == 3601)
        let merged = try onlyPush(harness.tick(at: 3601))
        try assertPayload(
            merged, ["aps": ["content-available": 1], "beckon": ["reason": "clear", "clear": ["m4", "m5"], "badge": 7]]
        )
    }

    @Test func owedWakeAndClearShareOnePush() throws {
        var policy = DeliveryPolicy()
        policy.throttledAlertDelay = nil
        let harness = PlannerHarness(policy: policy)
        for index in 1...3 { harness.read(["r\(index)"], unread: 5, at: Double(index)) }
        #expect(harness.arrive(message("m9", unread: 6), at: 10) == [])
        #expect(harness.read(["r4"], unread: 5, at: 20) == [])
        let push = try onlyPush(harness.tick(at: 3601))
        #expect(push.reason == .wake)
        #expect(push.messageIDs == ["m9", "r4"])
        try assertPayload(
            push,
            ["aps": ["content-available": 1], "beckon": ["reason": "wake", "ids": ["m9"], "clear": ["r4"], "badge": 5]]
        )
        #expect(harness.deadline == 3661, "it wakes for m9, so it is watched")
    }

    @Test func readMessagesLeaveOwedWakesAndRepushes() throws {
        var policy = DeliveryPolicy(strategy: .serviceExtension)
        policy.backgroundPushesPerHour = 0
        let harness = PlannerHarness(policy: policy, device: .serviceExtension)
        harness.connect(at: 0)
        harness.disconnect(at: 1, unacked: ["m1"], clean: false)
        #expect(harness.read(["m1"], unread: 0, at: 2) == [], "no background budget at all")
        #expect(harness.run(until: 100_000) == [], "nothing left to re-push")
    }
}
