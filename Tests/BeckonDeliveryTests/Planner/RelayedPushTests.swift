import APNSCore
import BeckonDelivery
import BeckonJSON
import BeckonProtocol
import Foundation
import Testing

/// A push its caller wrote whole (gorush): sent once, as asked, within Apple's rules, whatever
/// the app's strategy, and never escalated, re-pushed or counted as a missed wake.
@Suite struct RelayedPushTests {
    static func relayed(_ push: RelayedPush, id: String = "m1") -> PlannedMessage {
        PlannedMessage(id: id, unreadCount: 1, extras: PushExtras(custom: ["sync": "inbox"], relay: push))
    }

    @Test func aSilentPushIsOneBackgroundPushAtPriorityFiveWithNothingAfter() throws {
        let harness = PlannerHarness(device: .wake)
        let actions = harness.arrive(Self.relayed(RelayedPush(kind: .background)), at: 0)
        let sent = pushes(actions)
        #expect(sent.count == 1)
        let push = try #require(sent.first)
        #expect(push.reason == .relayed)
        #expect(push.notification.pushType == .background)
        #expect(push.notification.priority == .considerPower)
        let payload = try JSONParser.parse(push.notification.encodedPayload())
        #expect(payload["aps"] == ["content-available": 1])
        #expect(payload["sync"] == "inbox")
        #expect(payload["beckon"] == nil)
        // No reconnect window, no escalation alert: the device never syncs with Beckon.
        #expect(harness.run(until: 3600).isEmpty)
    }

    @Test func anAlertKeepsTheCallersFieldsAndPriority() throws {
        let harness = PlannerHarness(device: .serviceExtension)
        let push = RelayedPush(
            kind: .alert, considerPower: true, alert: APNSAlert(title: "Standup"), sound: .named("chime.caf"),
            threadID: "team-7", collapseID: "standup")
        let sent = try #require(pushes(harness.arrive(Self.relayed(push), at: 0)).first)
        #expect(sent.notification.priority == .considerPower)
        guard case .alert(let alert) = sent.notification else { Issue.record("not an alert"); return }
        #expect(alert.collapseID == "standup")
        #expect(alert.sound == .named("chime.caf"))
        #expect(alert.mutableContent == false, "as asked, not as the service-extension strategy would")
    }

    @Test func whatAPNsCannotTakeIsSaidBeforeAnythingIsSent() {
        let tooLarge = RelayedPush(kind: .alert, alert: APNSAlert(title: "x"), collapseID: String(repeating: "c", count: 65))
        #expect(tooLarge.problem(custom: [:], bundleID: "com.example.chat")?.contains("collapse") == true)
        #expect(RelayedPush(kind: .alert, badge: 1).problem(custom: [:], bundleID: "com.example.chat") == nil)
    }
}
