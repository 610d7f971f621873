import BeckonProtocol
import APNSCore
import BeckonDelivery
import BeckonJSON
import Foundation
import Testing

/// The planner is persisted between events, so it must round-trip; its pushes go to the outbox rendered.
@Suite struct CodableTests {
    /// Through the encoder the server saves states with, and back as it reads them.
    private func roundTrip<T: Codable>(_ value: T) throws -> T {
        try JSONDecoder().decode(T.self, from: Data(try JSONStreamEncoder().encode(value)))
    }

    /// Wake in flight, a clear sent, a call ringing, a re-push scheduled and a wake owed.
    private func midFlight() -> PlannerHarness {
        var policy = DeliveryPolicy()
        policy.backgroundPushesPerHour = 2
        let harness = PlannerHarness(policy: policy)
        harness.connect(at: 0)
        harness.disconnect(at: 1, unacked: ["m0"], clean: false)
        harness.arrive(message("m1", hints: NotificationHints(title: "t"), unread: 1), at: 2)
        harness.arrive(message("c1", kind: .call, hints: NotificationHints(title: "Anna")), at: 5)
        harness.read(["m0"], unread: 1, at: 6)
        harness.read(["x"], unread: 1, at: 7)
        return harness
    }

    private func future(_ harness: PlannerHarness) -> [PlannerAction] {
        var actions = harness.run(until: 200)
        actions += harness.arrive(message("m2", unread: 2), at: 210)
        actions += harness.run(until: 300)
        actions += harness.endCall("c1", .answeredElsewhere, at: 310)
        actions += harness.connect(at: 320)
        actions += harness.disconnect(at: 330, unacked: ["m2"], clean: false)
        actions += harness.run(until: 100_000)
        return actions
    }

    @Test func plannerMidFlightRoundTripsWithIdenticalFuture() throws {
        let original = midFlight()
        #expect(original.deadline != nil)
        let restored = PlannerHarness(policy: original.planner.policy, device: original.device)
        restored.planner = try roundTrip(original.planner)
        // The policy is configuration, not saved state: the driver sets it again after decoding.
        #expect(restored.planner.policy == DeliveryPolicy())
        restored.planner.policy = original.planner.policy
        restored.issued = original.issued
        #expect(restored.planner == original.planner)
        #expect(restored.planner.nextDeadline == original.planner.nextDeadline)

        let expected = future(original)
        #expect(future(restored) == expected)
        #expect(pushes(expected).count > 3, "the future is not trivially empty")
    }

    @Test func aStateSavedBeforeTheClearAllFieldsStillLoads() throws {
        let harness = midFlight()
        // What the previous version saved: the same keys, without the clear-all bookkeeping.
        var saved = try #require(JSONSerialization.jsonObject(with: JSONEncoder().encode(harness.planner)) as? [String: Any])
        saved["mayShowNotifications"] = nil
        saved["lastClearAllAt"] = nil
        let old = try JSONSerialization.data(withJSONObject: saved)
        var restored = try JSONDecoder().decode(DevicePlanner.self, from: old)
        restored.policy = harness.planner.policy  // The app's configuration is not in the state.
        #expect(restored.nextDeadline == harness.planner.nextDeadline, "calls, re-pushes and owed wakes survive")
        #expect(restored.isUnreachable == harness.planner.isUnreachable)
    }

    @Test func plannedPushesRenderForTheOutbox() throws {
        let key = Data(repeating: 1, count: 32)
        var device = PlannerDevice(
            hasRemoteToken: true, hasVoIPToken: true, capabilities: DeviceCapabilities(notificationServiceExtension: true),
            contentKey: key
        )
        let harness = PlannerHarness(policy: DeliveryPolicy(strategy: .content), device: device)
        var sent = pushes(harness.arrive(message("m1", hints: NotificationHints(title: "a", body: "b")), at: 0))
        sent += pushes(harness.arrive(message("c1", kind: .call, hints: NotificationHints(title: "A")), at: 1))
        sent += pushes(harness.read(["m1"], unread: 0, at: 2))
        device.hasVoIPToken = false
        harness.device = device
        sent += pushes(harness.arrive(message("c2", kind: .call), at: 3))
        // The read leaves nothing unread: a badge-0 alert clears all.
        #expect(sent.map(\.notification.pushType) == [.alert, .voip, .alert, .alert])
        #expect(sent.map(\.reason) == [.alert, .callVoIP, .clearAll, .callRing])
        for push in sent {
            // What the outbox stores and the dispatcher sends: the push's own id, topic and body.
            let rendered = try push.rendered(bundleID: bundleID)
            #expect(rendered.apnsID == push.id)
            #expect(rendered.pushType == push.notification.pushType)
            #expect(rendered.payload == push.notification.encodedPayload())
            #expect(try request(push).topic == (push.notification.pushType == .voip ? bundleID + ".voip" : bundleID))
        }
    }

}
