import APNSCore
@testable import BeckonDelivery
import BeckonProtocol
import Foundation
import Testing

/// What sync protocol version 2 asks of the planner: honest measurement, clear-all, shown
/// messages, calls that cannot ring after their time.
@Suite struct ProtocolV2PlannerTests {
    @Test func aPushWhoseWindowPassedIsMissedEvenIfTheDeviceComesBackLater() throws {
        let harness = PlannerHarness(policy: DeliveryPolicy(strategy: .serviceExtension), device: .serviceExtension)
        harness.arrive(message("m1"), at: 0)
        // The window (60 s) ends at the next event the planner sees, not only at a connection.
        #expect(harness.tick(at: 61) == [.wakeMissed(pushID: pushID(1), reason: .alert, strategy: .serviceExtension)])
        #expect(harness.connect(at: 300) == [], "nothing left to credit")
    }

    @Test func clearAllIsSentAtMostOncePerInterval() throws {
        var policy = DeliveryPolicy()
        policy.clearAllInterval = 600
        let harness = PlannerHarness(policy: policy)
        harness.arrive(message("m1"), at: 0)
        let first = try onlyPush(harness.read(["m1"], unread: 0, at: 10))
        #expect(first.reason == .clearAll)
        #expect(first.notification.pushType == .alert)
        #expect(first.notification.priority == .considerPower)
        // The app comes and goes; another message wakes it, and is read elsewhere within the
        // interval: an ordinary background clear.
        harness.connect(at: 15)
        harness.disconnect(at: 16)
        #expect(try onlyPush(harness.arrive(message("m2"), at: 20)).reason == .wake)
        #expect(try onlyPush(harness.read(["m2"], unread: 0, at: 30)).reason == .clear)
        // After the interval, a clear-all again.
        harness.connect(at: 40)
        harness.disconnect(at: 41)
        #expect(try onlyPush(harness.arrive(message("m3"), at: 4000)).reason == .wake)
        #expect(try onlyPush(harness.read(["m3"], unread: 0, at: 4010)).reason == .clearAll)
    }

    @Test func noClearAllForADeviceThatWasToldNothingSinceItLastConnected() {
        let harness = PlannerHarness()
        harness.connect(at: 0)
        harness.disconnect(at: 1)
        // Nothing was pushed since: there is nothing on its screen to clear.
        let actions = harness.read(["m0"], unread: 0, at: 5)
        #expect(pushes(actions).allSatisfy { $0.reason != .clearAll })
    }

    @Test func anAppWokenInTheBackgroundStillGetsTheClearAll() throws {
        let harness = PlannerHarness()
        harness.arrive(message("m1"), at: 0)
        // The wake connects the app in the background; it posts m1's notification and is suspended.
        harness.connect(at: 1)
        harness.disconnect(at: 2)
        #expect(try onlyPush(harness.read(["m1"], unread: 0, at: 10)).reason == .clearAll)
    }

    @Test func anAppTheUserOpenedNeedsNoClearAll() {
        let harness = PlannerHarness()
        harness.arrive(message("m1"), at: 0)
        // Long after the wake's window, the user opens the app: it reconciles what is on screen.
        harness.connect(at: 3000)
        harness.disconnect(at: 3001)
        #expect(pushes(harness.read(["m1"], unread: 0, at: 3010)).allSatisfy { $0.reason != .clearAll })
    }

    @Test func aMessageShownByTheExtensionIsNotPushedAgain() {
        let harness = PlannerHarness(policy: DeliveryPolicy(strategy: .serviceExtension), device: .serviceExtension)
        harness.connect(at: 0)
        harness.disconnect(at: 1, unacked: ["m1"], clean: false)
        #expect(harness.planner.nextDeadline != nil, "a re-push is scheduled")
        _ = harness.planner.shown(messageIDs: ["m1"], now: at(2))
        #expect(harness.planner.nextDeadline == nil)
        #expect(harness.run(until: 600).isEmpty)
    }

    @Test func callPushesCarryTheirRingingTime() throws {
        var policy = DeliveryPolicy()
        policy.callTimeout = 45
        var voipDevice = PlannerDevice.wake
        voipDevice.hasVoIPToken = true
        let voip = try onlyPush(PlannerHarness(policy: policy, device: voipDevice).arrive(message("c1", kind: .call), at: 0))
        #expect(voip.ringing?.callID == "c1")
        #expect(voip.ringing?.until == at(45))
        let harness = PlannerHarness(policy: policy)
        let ring = try onlyPush(harness.arrive(message("c2", kind: .call), at: 0))
        #expect(ring.reason == .callRing)
        #expect(ring.ringing?.until == at(45))
        // The final alert is the outcome, not a ring: nothing stops it.
        let answered = try onlyPush(harness.endCall("c2", .answeredElsewhere, at: 5))
        #expect(answered.reason == .answeredElsewhere)
        #expect(answered.ringing == nil)
    }
}

@Suite struct ExtensionSessionPlannerTests {
    @Test func anExtensionSessionDoesNotCancelAClearAll() throws {
        let harness = PlannerHarness()
        harness.arrive(message("m1"), at: 0)
        // The extension syncs the message (and shows its notification), then ends.
        _ = harness.planner.connected(now: at(1), role: .extension)
        harness.disconnect(at: 2)
        // Read on the desktop: the notification the extension showed must go.
        #expect(try onlyPush(harness.read(["m1"], unread: 0, at: 10)).reason == .clearAll)
    }
}
