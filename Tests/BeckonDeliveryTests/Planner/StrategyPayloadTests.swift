import BeckonProtocol
import APNSCore
import BeckonDelivery
import Foundation
import Testing

/// The alert strategies' payloads and headers (docs/design.md, "Delivery strategies"; rule 2).
@Suite struct StrategyPayloadTests {
    private let hints = NotificationHints(
        title: "Anna", body: "See you at 8", threadID: "chat-1", category: "MESSAGE", sound: "ping.caf"
    )

    @Test func serviceExtensionAlert() throws {
        let harness = PlannerHarness(policy: DeliveryPolicy(strategy: .serviceExtension), device: .serviceExtension)
        let push = try onlyPush(harness.arrive(message("m1", hints: hints, unread: 7), at: 0))
        #expect(push.reason == .alert)
        #expect(push.strategy == .serviceExtension)
        #expect(
            try headers(push) == [
                "apns-push-type": "alert", "apns-topic": bundleID, "apns-priority": "10",
                "apns-id": "00000000-0000-0000-0000-000000000001", "apns-collapse-id": "m1",
                "apns-expiration": epoch(86_400),
            ]
        )
        // Generic text only: the extension fetches "m1" and rewrites it (rule 1).
        try assertPayload(
            push,
            [
                "aps": [
                    "alert": ["loc-key": "BECKON_NEW_MESSAGE"], "badge": 7, "sound": "ping.caf", "thread-id": "chat-1",
                    "category": "MESSAGE", "mutable-content": 1,
                ],
                "beckon": ["reason": "alert", "ids": ["m1"]],
            ]
        )
        #expect(harness.deadline == nil)
    }

    @Test func filteringIsAPriorityTenMutableAlert() throws {
        let harness = PlannerHarness(policy: DeliveryPolicy(strategy: .filtering), device: .filtering)
        let push = try onlyPush(harness.arrive(message("m1", hints: hints, unread: 1), at: 0))
        #expect(push.strategy == .filtering)
        let request = try request(push)
        #expect(request.pushType == .alert, "Apple: filtering requires push type alert (apns.md E.4)")
        #expect(request.priority == .immediately)
        #expect(request.topic == bundleID)
        try assertPayload(
            push,
            [
                "aps": [
                    "alert": ["loc-key": "BECKON_NEW_MESSAGE"], "badge": 1, "sound": "ping.caf", "thread-id": "chat-1",
                    "category": "MESSAGE", "mutable-content": 1,
                ],
                "beckon": ["reason": "alert", "ids": ["m1"]],
            ]
        )
    }

    @Test func filteringWithoutEntitlementFallsBackToServiceExtension() throws {
        let harness = PlannerHarness(policy: DeliveryPolicy(strategy: .filtering), device: .serviceExtension)
        #expect(try onlyPush(harness.arrive(message("m1"), at: 0)).strategy == .serviceExtension)
    }

    @Test func contentAlertShowsTheHints() throws {
        let harness = PlannerHarness(policy: DeliveryPolicy(strategy: .content), device: .plain)
        let push = try onlyPush(harness.arrive(message("m1", hints: hints, unread: 2), at: 0))
        #expect(push.strategy == .content)
        try assertPayload(
            push,
            [
                "aps": [
                    "alert": ["title": "Anna", "body": "See you at 8"], "badge": 2, "sound": "ping.caf",
                    "thread-id": "chat-1", "category": "MESSAGE",
                ],
                "beckon": ["reason": "alert", "ids": ["m1"]],
            ]
        )
    }

    @Test func contentWithoutHintsUsesGenericText() throws {
        let harness = PlannerHarness(policy: DeliveryPolicy(strategy: .content), device: .plain)
        let push = try onlyPush(harness.arrive(message("m1"), at: 0))
        #expect(try path(payload(push), "aps.alert.loc-key") as? String == "BECKON_NEW_MESSAGE")
    }

    @Test func contentLocalisedHints() throws {
        let harness = PlannerHarness(policy: DeliveryPolicy(strategy: .content), device: .plain)
        let localised = NotificationHints(titleLocKey: "FROM", titleLocArgs: ["Anna"], locKey: "SAYS", locArgs: ["hi"])
        let push = try onlyPush(harness.arrive(message("m1", hints: localised), at: 0))
        #expect(
            try path(payload(push), "aps.alert") as? NSDictionary
                == ["title-loc-key": "FROM", "title-loc-args": ["Anna"], "loc-key": "SAYS", "loc-args": ["hi"]] as NSDictionary
        )
    }

    @Test func longContentIsTruncatedToFit() throws {
        let harness = PlannerHarness(policy: DeliveryPolicy(strategy: .content), device: .plain)
        let body = String(repeating: "Grüße 👋🏽 ", count: 800)
        let push = try onlyPush(harness.arrive(message("m1", hints: NotificationHints(title: "Anna", body: body)), at: 0))
        #expect(push.notification.encodedPayload().count > 4096)
        let request = try request(push)
        #expect(request.payload.count <= 4096)
        let json = try #require(JSONSerialization.jsonObject(with: Data(request.payload)) as? NSDictionary)
        let sent = try #require(path(json, "aps.alert.body") as? String)
        #expect(sent.hasSuffix("…"))
        #expect(body.hasPrefix(sent.dropLast()))
        #expect(path(json, "aps.alert.title") as? String == "Anna")
    }

    @Test func plainAlertWithoutSoundPolicy() throws {
        var policy = DeliveryPolicy(strategy: .serviceExtension)
        policy.alertSound = nil
        let harness = PlannerHarness(policy: policy, device: .serviceExtension)
        let push = try onlyPush(harness.arrive(message("m1"), at: 0))
        #expect(try path(payload(push), "aps.sound") == nil)
    }

    @Test func wakeWithoutBackgroundModeFallsBackToGenericAlert() throws {
        let harness = PlannerHarness(device: .plain)
        let push = try onlyPush(harness.arrive(message("m1"), at: 0))
        #expect(push.strategy == .serviceExtension)
        #expect(push.notification.pushType == .alert)
        #expect(harness.deadline == nil)
    }

    /// A drop-in's keys (Matrix `event_id`, gorush `data`) ride at the top of the payload of a
    /// wake and of an alert alike; `aps` and `beckon` stay Beckon's (docs/drop-ins.md).
    @Test func dropInKeysRideBesideApsAndBeckon() throws {
        let extras = PushExtras(custom: ["event_id": "$e1", "room_id": "!r", "aps": ["alert": "theirs"]], badge: 4)
        #expect(extras.custom["aps"] == nil, "reserved keys are dropped")
        var planned = message("m1", unread: 4)
        planned.extras = extras
        let wake = try onlyPush(PlannerHarness(policy: DeliveryPolicy(strategy: .wake), device: .wake).arrive(planned, at: 0))
        #expect(try request(wake).pushType == .background)
        try assertPayload(wake, [
            "aps": ["content-available": 1], "beckon": ["reason": "wake", "ids": ["m1"], "badge": 4], "event_id": "$e1",
            "room_id": "!r",
        ])
        let alert = try onlyPush(
            PlannerHarness(policy: DeliveryPolicy(strategy: .serviceExtension), device: .serviceExtension).arrive(planned, at: 0))
        #expect(path(try payload(alert), "event_id") as? String == "$e1")
        #expect(path(try payload(alert), "aps.mutable-content") as? Int == 1)
        #expect(path(try payload(alert), "beckon.ids") as? [String] == ["m1"])
        #expect(path(try payload(alert), "aps.badge") as? Int == 4, "the drop-in's count")
        // Without a count of its own a drop-in's push leaves the badge alone: Beckon's unread
        // count knows nothing of what was read over the other protocol.
        planned.extras = PushExtras(custom: ["event_id": "$e2"])
        let unbadged = try onlyPush(
            PlannerHarness(policy: DeliveryPolicy(strategy: .serviceExtension), device: .serviceExtension).arrive(planned, at: 0))
        #expect(path(try payload(unbadged), "aps.badge") == nil)
    }
}
