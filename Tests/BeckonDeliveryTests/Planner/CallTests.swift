import BeckonSeal
import BeckonProtocol
import APNSCore
import BeckonDelivery
import Foundation
import Testing

/// Rule 6: calls go to PushKit at once, or ring by repeated alerts with collapse id = call id.
@Suite struct CallTests {
    private let hints = NotificationHints(title: "Anna is calling", category: "CALL")
    private let voipDevice = PlannerDevice(
        hasRemoteToken: true, hasVoIPToken: true, capabilities: DeviceCapabilities(backgroundModes: ["voip"])
    )

    @Test func callWithVoIPTokenIsOneVoIPPush() throws {
        let harness = PlannerHarness(device: voipDevice)
        let push = try onlyPush(harness.arrive(message("c1", kind: .call, hints: hints), at: 0))
        #expect(push.token == .voip)
        #expect(push.reason == .callVoIP)
        #expect(push.messageIDs == ["c1"])
        #expect(
            try headers(push) == [
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
        let hintsJSON = try JSONSerialization.data(withJSONObject: try #require(try beckon(push)["hints"]))
        #expect(try JSONDecoder().decode(NotificationHints.self, from: hintsJSON) == hints)
        #expect(harness.deadline == nil, "no ringing by alerts")
        #expect(harness.endCall("c1", .endedByCaller, at: 20) == [], "the call's end reaches the app over sync")
    }

    @Test func callToConnectedDeviceStillGetsTheVoIPPush() throws {
        let harness = PlannerHarness(device: voipDevice)
        harness.connect(at: 0)
        #expect(try onlyPush(harness.arrive(message("c1", kind: .call), at: 1)).token == .voip)
    }

    @Test func voIPHintsAreSealedWhenTheDeviceHasAKey() throws {
        var device = voipDevice
        let key = Data(repeating: 7, count: 32)
        device.contentKey = key
        let harness = PlannerHarness(device: device)
        let push = try onlyPush(harness.arrive(message("c1", kind: .call, hints: hints), at: 0))
        #expect(try beckon(push)["hints"] == nil)
        let sealed = try #require(try beckon(push)["sealed"] as? String)
        #expect(try ContentSeal.open(sealed, key: key).title == "Anna is calling")
    }

    @Test func withoutVoIPTokenAlertsRingUntilTimeoutThenMissedCall() throws {
        let harness = PlannerHarness()
        let first = try onlyPush(harness.arrive(message("c1", kind: .call, hints: hints, unread: 2), at: 0))
        #expect(first.reason == .callRing)
        #expect(
            try headers(first) == [
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
        #expect(harness.deadline == 10)

        let later = pushes(harness.run(until: 100))
        #expect(later.map(\.reason) == [.callRing, .callRing, .callRing, .callRing, .missedCall])
        #expect(later.map(\.plannedAt) == [10, 20, 30, 40, 45].map(at))
        #expect(Set(later.compactMap(\.notification.collapseID)) == ["c1"])
        let missed = try #require(later.last)
        try assertPayload(
            missed,
            [
                "aps": ["alert": ["loc-key": "BECKON_MISSED_CALL"], "badge": 2, "category": "CALL"],
                "beckon": ["reason": "missed-call", "call": "c1", "ids": ["c1"]],
            ]
        )
        #expect(try headers(missed)["apns-expiration"] == epoch(45 + 86_400))
        #expect(harness.deadline == nil)
    }

    @Test func answeredElsewhereReplacesTheRingingAlert() throws {
        let harness = PlannerHarness()
        harness.arrive(message("c1", kind: .call, hints: hints), at: 0)
        harness.tick(at: 10)
        let update = try onlyPush(harness.endCall("c1", .answeredElsewhere, at: 15))
        #expect(update.reason == .answeredElsewhere)
        #expect(update.notification.collapseID == "c1")
        #expect(
            try path(payload(update), "aps.alert.loc-key") as? String == "BECKON_CALL_ANSWERED_ELSEWHERE"
        )
        #expect(try path(payload(update), "aps.sound") == nil, "the replacement does not ring")
        #expect(harness.deadline == nil)
        #expect(harness.run(until: 100) == [])
    }

    @Test func otherOutcomes() throws {
        for (outcome, expected) in [
            (CallOutcome.answeredHere, nil), (.declinedHere, nil), (.declinedElsewhere, PushReason.declinedElsewhere),
            (.endedByCaller, .missedCall),
        ] {
            let harness = PlannerHarness()
            harness.arrive(message("c1", kind: .call), at: 0)
            #expect(pushes(harness.endCall("c1", outcome, at: 5)).map(\.reason) == expected.map { [$0] } ?? [])
            #expect(harness.deadline == nil, "\(outcome) stops the ringing")
        }
    }

    @Test func callRingsEvenWhenConnectedAndKeepsRingingAfterConnecting() throws {
        let harness = PlannerHarness()
        harness.connect(at: 0)
        #expect(try onlyPush(harness.arrive(message("c1", kind: .call), at: 1)).reason == .callRing)
        harness.disconnect(at: 2)
        harness.connect(at: 3)
        #expect(try onlyPush(harness.tick(at: 11)).reason == .callRing)
    }

    @Test func callExpiryShortensTheTimeoutAndDuplicatesAreIgnored() throws {
        let harness = PlannerHarness()
        harness.arrive(message("c1", kind: .call, expiresAt: at(25)), at: 0)
        #expect(harness.arrive(message("c1", kind: .call, expiresAt: at(25)), at: 1) == [])
        #expect(pushes(harness.run(until: 100)).map(\.reason) == [.callRing, .callRing, .missedCall])
    }

    @Test func contentStrategyRingShowsTheCaller() throws {
        let harness = PlannerHarness(policy: DeliveryPolicy(strategy: .content), device: .plain)
        let ring = try onlyPush(harness.arrive(message("c1", kind: .call, hints: hints), at: 0))
        #expect(try path(payload(ring), "aps.alert.title") as? String == "Anna is calling")
    }
}
