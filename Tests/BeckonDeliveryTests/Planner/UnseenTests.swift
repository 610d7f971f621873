import APNSCore
import BeckonDelivery
import BeckonProtocol
import Foundation
import Testing

/// Rule 11: an offline phone gets only the last alert APNs holds for it (apns.md E.1), so every
/// message alert names all the device has not seen since its last session.
@Suite struct UnseenTests {
    private func ids(_ actions: [PlannerAction]) throws -> [String] {
        try beckon(onlyPush(actions))["ids"] as? [String] ?? []
    }

    @Test func eachAlertNamesEveryMessageSinceTheLastSession() throws {
        let harness = PlannerHarness(policy: DeliveryPolicy(strategy: .serviceExtension), device: .serviceExtension)
        harness.connect(at: 0)
        harness.disconnect(at: 1)
        #expect(try ids(harness.arrive(message("m1"), at: 10)) == ["m1"])
        #expect(try ids(harness.arrive(message("m2"), at: 70)) == ["m1", "m2"])
        let third = try onlyPush(harness.arrive(message("m3"), at: 130))
        #expect(try beckon(third)["ids"] as? [String] == ["m1", "m2", "m3"])
        // One collapse id for them all, the first's (apns.md E.2): online, each alert replaces
        // the one before instead of showing m1 and m2 a second time.
        #expect(try header(request(third), "apns-collapse-id") == "m1")
        #expect(try beckon(third)["unseen"] == nil)
        // A session syncs them all: the next alert is about the next message alone.
        harness.connect(at: 200)
        harness.disconnect(at: 210)
        let fourth = try onlyPush(harness.arrive(message("m4"), at: 300))
        #expect(try beckon(fourth)["ids"] as? [String] == ["m4"])
        #expect(try header(request(fourth), "apns-collapse-id") == "m4", "a new batch")
    }

    @Test func readElsewhereOrShownByTheExtensionIsNotNamedAgain() throws {
        let harness = PlannerHarness(policy: DeliveryPolicy(strategy: .serviceExtension), device: .serviceExtension)
        harness.arrive(message("m1"), at: 0)
        harness.arrive(message("m2"), at: 1)
        harness.read(["m1"], unread: 1, at: 2)
        _ = harness.planner.shown(messageIDs: ["m2"], now: at(3))
        #expect(try ids(harness.arrive(message("m3"), at: 4)) == ["m3"])
    }

    @Test func messagesLeftUnacknowledgedAtByeAreUnseen() throws {
        let harness = PlannerHarness(policy: DeliveryPolicy(strategy: .serviceExtension), device: .serviceExtension)
        harness.connect(at: 0)
        harness.disconnect(at: 1, unacked: ["m1"], clean: false)
        #expect(try ids(harness.arrive(message("m2"), at: 2)) == ["m1", "m2"])
    }

    @Test func receiptsAndLowUrgencyAreNotNamed() throws {
        let harness = PlannerHarness(policy: DeliveryPolicy(strategy: .serviceExtension), device: .serviceExtension)
        harness.arrive(message("r1", kind: .receipt), at: 0)
        harness.arrive(message("l1", urgency: .low), at: 1)
        #expect(try ids(harness.arrive(message("m1"), at: 2)) == ["m1"])
    }

    /// The unreachable `wake` device: its alerts keep naming what it missed.
    @Test func unreachableAlertsNameEverythingMissed() throws {
        let harness = PlannerHarness()
        harness.arrive(message("m1"), at: 0)  // A wake.
        let escalation = harness.tick(at: 60)
        #expect(try ids(escalation.filter { if case .send = $0 { true } else { false } }) == ["m1"])
        #expect(try ids(harness.arrive(message("m2"), at: 100)) == ["m1", "m2"])
    }

    /// `content` without an extension: iOS shows the alert's own text and nothing can add the
    /// others, so naming them would claim they were shown.
    @Test func contentAlertsWithoutAnExtensionNameTheirOwnMessage() throws {
        let harness = PlannerHarness(policy: DeliveryPolicy(strategy: .content), device: .plain)
        harness.arrive(message("m1"), at: 0)
        #expect(try ids(harness.arrive(message("m2"), at: 1)) == ["m2"])
    }

    /// More than `maximumIDsPerPush`: the newest are named and `unseen` says how many in all.
    @Test func moreThanFitAreCounted() throws {
        let policy = DeliveryPolicy(strategy: .serviceExtension, maximumIDsPerPush: 3)
        let harness = PlannerHarness(policy: policy, device: .serviceExtension)
        for n in 1...4 { harness.arrive(message("m\(n)"), at: Double(n)) }
        let push = try onlyPush(harness.arrive(message("m5"), at: 5))
        #expect(try beckon(push)["ids"] as? [String] == ["m3", "m4", "m5"])
        #expect(try beckon(push)["unseen"] as? Int == 5)
    }

    /// Sealed text cannot be cut (rule 1), so names give way until the alert fits 4096 bytes.
    @Test func namesGiveWayToSealedTextWithinFourKilobytes() throws {
        let key = Data(repeating: 7, count: 32)
        let device = PlannerDevice(
            hasRemoteToken: true, capabilities: DeviceCapabilities(notificationServiceExtension: true), contentKey: key)
        let harness = PlannerHarness(policy: DeliveryPolicy(strategy: .content, maximumIDsPerPush: 40), device: device)
        let long = String(repeating: "x", count: 60)
        for n in 1...39 { harness.arrive(message("\(long)-\(n)"), at: Double(n)) }
        let hints = NotificationHints(title: "Anna", body: String(repeating: "word ", count: 600))
        let push = try onlyPush(harness.arrive(message("\(long)-40", hints: hints), at: 40))
        let rendered = try request(push)
        #expect(rendered.payload.count <= 4096)
        let named = try beckon(push)["ids"] as? [String] ?? []
        #expect(named.last == "\(long)-40")
        #expect(named.count > 1 && named.count < 40)
        #expect(try beckon(push)["unseen"] as? Int == 40)
        #expect(try beckon(push)["sealed"] != nil)
    }
}
