import BeckonProtocol
import APNSCore
import BeckonDelivery
import Foundation
import XCTest

/// Rule 7: read on one device, cleared on the others.
final class ReadElsewhereTests: XCTestCase {
    func testOfflineDeviceGetsAClearPush() throws {
        let harness = PlannerHarness()
        let push = try onlyPush(harness.read(["m1", "m2"], unread: 0, at: 0))
        XCTAssertEqual(push.reason, .clear)
        XCTAssertEqual(push.messageIDs, ["m1", "m2"])
        XCTAssertEqual(
            try headers(push),
            [
                "apns-push-type": "background", "apns-topic": bundleID, "apns-priority": "5",
                "apns-id": "00000000-0000-0000-0000-000000000001", "apns-expiration": epoch(3600),
            ]
        )
        try assertPayload(
            push, ["aps": ["content-available": 1], "beckon": ["reason": "clear", "clear": ["m1", "m2"], "badge": 0]]
        )
        XCTAssertNil(harness.deadline, "a clear push starts no reconnect window")
        XCTAssertEqual(
            harness.connect(at: 20), [.wakeObserved(pushID: pushID(1), reason: .clear, strategy: .wake, latency: 20)]
        )
    }

    func testConnectedDeviceGetsNoPush() {
        let harness = PlannerHarness()
        harness.connect(at: 0)
        XCTAssertEqual(harness.read(["m1"], unread: 0, at: 1), [])
        XCTAssertEqual(harness.planner.unreadCount, 0)
    }

    func testAlertStrategiesClearWithABackgroundPushToo() throws {
        let harness = PlannerHarness(policy: DeliveryPolicy(strategy: .serviceExtension), device: .serviceExtension)
        XCTAssertEqual(try onlyPush(harness.read(["m1"], unread: 3, at: 0)).notification.pushType, .background)
    }

    func testThrottledClearsAreMergedIntoOnePush() throws {
        let harness = PlannerHarness()
        for index in 1...3 { XCTAssertEqual(pushes(harness.read(["m\(index)"], unread: 9, at: Double(index))).count, 1) }
        XCTAssertEqual(harness.read(["m4"], unread: 8, at: 10), [])
        XCTAssertEqual(harness.read(["m5", "m4"], unread: 7, at: 20), [])
        XCTAssertEqual(harness.deadline, 3601)
        let merged = try onlyPush(harness.tick(at: 3601))
        try assertPayload(
            merged, ["aps": ["content-available": 1], "beckon": ["reason": "clear", "clear": ["m4", "m5"], "badge": 7]]
        )
    }

    func testOwedWakeAndClearShareOnePush() throws {
        var policy = DeliveryPolicy()
        policy.throttledAlertDelay = nil
        let harness = PlannerHarness(policy: policy)
        for index in 1...3 { harness.read(["r\(index)"], unread: 5, at: Double(index)) }
        XCTAssertEqual(harness.arrive(message("m9", unread: 6), at: 10), [])
        XCTAssertEqual(harness.read(["r4"], unread: 5, at: 20), [])
        let push = try onlyPush(harness.tick(at: 3601))
        XCTAssertEqual(push.reason, .wake)
        XCTAssertEqual(push.messageIDs, ["m9", "r4"])
        try assertPayload(
            push,
            ["aps": ["content-available": 1], "beckon": ["reason": "wake", "ids": ["m9"], "clear": ["r4"], "badge": 5]]
        )
        XCTAssertEqual(harness.deadline, 3661, "it wakes for m9, so it is watched")
    }

    func testReadMessagesLeaveOwedWakesAndRepushes() throws {
        var policy = DeliveryPolicy(strategy: .serviceExtension)
        policy.backgroundPushesPerHour = 0
        let harness = PlannerHarness(policy: policy, device: .serviceExtension)
        harness.connect(at: 0)
        harness.disconnect(at: 1, unacked: ["m1"], clean: false)
        XCTAssertEqual(harness.read(["m1"], unread: 0, at: 2), [], "no background budget at all")
        XCTAssertEqual(harness.run(until: 100_000), [], "nothing left to re-push")
    }
}
