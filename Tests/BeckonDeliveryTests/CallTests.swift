import BeckonSeal
import BeckonProtocol
import APNSCore
import BeckonDelivery
import Foundation
import XCTest

/// Rule 6: calls go to PushKit at once, or ring by repeated alerts with collapse id = call id.
final class CallTests: XCTestCase {
    private let hints = NotificationHints(title: "Anna is calling", category: "CALL")
    private let voipDevice = PlannerDevice(
        hasRemoteToken: true, hasVoIPToken: true, capabilities: DeviceCapabilities(backgroundModes: ["voip"])
    )

    func testCallWithVoIPTokenIsOneVoIPPush() throws {
        let harness = PlannerHarness(device: voipDevice)
        let push = try onlyPush(harness.arrive(message("c1", kind: .call, hints: hints), at: 0))
        XCTAssertEqual(push.token, .voip)
        XCTAssertEqual(push.reason, .callVoIP)
        XCTAssertEqual(push.messageIDs, ["c1"])
        XCTAssertEqual(
            try headers(push),
            [
                "apns-push-type": "voip", "apns-topic": bundleID + ".voip", "apns-priority": "10",
                "apns-id": "00000000-0000-0000-0000-000000000001", "apns-expiration": "0",
            ]
        )
        try assertPayload(
            push,
            [
                "aps": [String: Any](),
                "beckon": [
                    "reason": "call-voip", "call": "c1", "ids": ["c1"],
                    "hints": ["title": "Anna is calling", "category": "CALL"],
                ],
            ]
        )
        // The hints decode as NotificationHints, so the app hands them to CallKit without fetching.
        let hintsJSON = try JSONSerialization.data(withJSONObject: try XCTUnwrap(try beckon(push)["hints"]))
        XCTAssertEqual(try JSONDecoder().decode(NotificationHints.self, from: hintsJSON), hints)
        XCTAssertNil(harness.deadline, "no ringing by alerts")
        XCTAssertEqual(harness.endCall("c1", .endedByCaller, at: 20), [], "the call's end reaches the app over sync")
    }

    func testCallToConnectedDeviceStillGetsTheVoIPPush() throws {
        let harness = PlannerHarness(device: voipDevice)
        harness.connect(at: 0)
        XCTAssertEqual(try onlyPush(harness.arrive(message("c1", kind: .call), at: 1)).token, .voip)
    }

    func testVoIPHintsAreSealedWhenTheDeviceHasAKey() throws {
        var device = voipDevice
        let key = Data(repeating: 7, count: 32)
        device.contentKey = key
        let harness = PlannerHarness(device: device)
        let push = try onlyPush(harness.arrive(message("c1", kind: .call, hints: hints), at: 0))
        XCTAssertNil(try beckon(push)["hints"])
        let sealed = try XCTUnwrap(try beckon(push)["sealed"] as? String)
        XCTAssertEqual(try ContentSeal.open(sealed, key: key).title, "Anna is calling")
    }

    func testWithoutVoIPTokenAlertsRingUntilTimeoutThenMissedCall() throws {
        let harness = PlannerHarness()
        let first = try onlyPush(harness.arrive(message("c1", kind: .call, hints: hints, unread: 2), at: 0))
        XCTAssertEqual(first.reason, .callRing)
        XCTAssertEqual(
            try headers(first),
            [
                "apns-push-type": "alert", "apns-topic": bundleID, "apns-priority": "10",
                "apns-id": "00000000-0000-0000-0000-000000000001", "apns-collapse-id": "c1",
                "apns-expiration": epoch(45),
            ]
        )
        try assertPayload(
            first,
            [
                "aps": ["alert": ["loc-key": "BECKON_CALL"], "badge": 2, "sound": "default", "category": "CALL"],
                "beckon": ["reason": "call-ring", "call": "c1", "ids": ["c1"]],
            ]
        )
        XCTAssertEqual(harness.deadline, 10)

        let later = pushes(harness.run(until: 100))
        XCTAssertEqual(later.map(\.reason), [.callRing, .callRing, .callRing, .callRing, .missedCall])
        XCTAssertEqual(later.map(\.plannedAt), [10, 20, 30, 40, 45].map(at))
        XCTAssertEqual(Set(later.compactMap(\.notification.collapseID)), ["c1"])
        let missed = try XCTUnwrap(later.last)
        try assertPayload(
            missed,
            [
                "aps": ["alert": ["loc-key": "BECKON_MISSED_CALL"], "badge": 2, "category": "CALL"],
                "beckon": ["reason": "missed-call", "call": "c1", "ids": ["c1"]],
            ]
        )
        XCTAssertEqual(try headers(missed)["apns-expiration"], epoch(45 + 86_400))
        XCTAssertNil(harness.deadline)
    }

    func testAnsweredElsewhereReplacesTheRingingAlert() throws {
        let harness = PlannerHarness()
        harness.arrive(message("c1", kind: .call, hints: hints), at: 0)
        harness.tick(at: 10)
        let update = try onlyPush(harness.endCall("c1", .answeredElsewhere, at: 15))
        XCTAssertEqual(update.reason, .answeredElsewhere)
        XCTAssertEqual(update.notification.collapseID, "c1")
        XCTAssertEqual(
            try path(payload(update), "aps.alert.loc-key") as? String, "BECKON_CALL_ANSWERED_ELSEWHERE"
        )
        XCTAssertNil(try path(payload(update), "aps.sound"), "the replacement does not ring")
        XCTAssertNil(harness.deadline)
        XCTAssertEqual(harness.run(until: 100), [])
    }

    func testOtherOutcomes() throws {
        for (outcome, expected) in [
            (CallOutcome.answeredHere, nil), (.declinedHere, nil), (.declinedElsewhere, PushReason.declinedElsewhere),
            (.endedByCaller, .missedCall),
        ] {
            let harness = PlannerHarness()
            harness.arrive(message("c1", kind: .call), at: 0)
            XCTAssertEqual(pushes(harness.endCall("c1", outcome, at: 5)).map(\.reason), expected.map { [$0] } ?? [])
            XCTAssertNil(harness.deadline, "\(outcome) stops the ringing")
        }
    }

    func testCallRingsEvenWhenConnectedAndKeepsRingingAfterConnecting() throws {
        let harness = PlannerHarness()
        harness.connect(at: 0)
        XCTAssertEqual(try onlyPush(harness.arrive(message("c1", kind: .call), at: 1)).reason, .callRing)
        harness.disconnect(at: 2)
        harness.connect(at: 3)
        XCTAssertEqual(try onlyPush(harness.tick(at: 11)).reason, .callRing)
    }

    func testCallExpiryShortensTheTimeoutAndDuplicatesAreIgnored() throws {
        let harness = PlannerHarness()
        harness.arrive(message("c1", kind: .call, expiresAt: at(25)), at: 0)
        XCTAssertEqual(harness.arrive(message("c1", kind: .call, expiresAt: at(25)), at: 1), [])
        XCTAssertEqual(pushes(harness.run(until: 100)).map(\.reason), [.callRing, .callRing, .missedCall])
    }

    func testContentStrategyRingShowsTheCaller() throws {
        let harness = PlannerHarness(policy: DeliveryPolicy(strategy: .content), device: .plain)
        let ring = try onlyPush(harness.arrive(message("c1", kind: .call, hints: hints), at: 0))
        XCTAssertEqual(try path(payload(ring), "aps.alert.title") as? String, "Anna is calling")
    }
}
