import APNSEmulator
@testable import BeckonServer
import BeckonStore
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Testing

/// Beckon in Sygnal's place answers what Synapse sends as Sygnal does (docs/drop-ins.md, Matrix
/// push gateway): long names shortened rather than refused, pushers dated by `pushkey_ts`, app
/// ids as globs, and the spec's object fields checked. Requests are shaped as Sygnal's own tests
/// shape them (`tests/testutils.py`, `tests/test_apns.py`) and as the spec's example.
@Suite struct MatrixDropInTests {
    static func token(_ seed: UInt8) -> (hex: String, pushkey: String) {
        let bytes = Data((0..<32).map { UInt8((Int($0) * 11 + Int(seed) * 37) % 256) })
        return (bytes.map { String(format: "%02x", $0) }.joined(), bytes.base64EncodedString())
    }

    /// A pusher as Sygnal's tests write one (`DEVICE_EXAMPLE`), with a real pushkey.
    static func device(appID: String, pushkey: String, pushkeyTS: Int = 42) -> [String: Any] {
        ["app_id": appID, "pushkey": pushkey, "pushkey_ts": pushkeyTS]
    }

    /// Sygnal's `_make_dummy_notification`, with `changes` applied (NSNull removes a key).
    static func notification(devices: [[String: Any]], _ changes: [String: Any] = [:]) throws -> String {
        var notification: [String: Any] = [
            "id": "$3957tyerfgewrf384", "room_id": "!slw48wfj34rtnrf:example.com",
            "event_id": "$qTOWWTEL48yPm3uT-gdNhFcoHxfKbZuqRVnnWWSkGBs", "type": "m.room.message",
            "sender": "@exampleuser:matrix.org", "sender_display_name": "Major Tom", "room_name": "Mission Control",
            "room_alias": "#exampleroom:matrix.org", "prio": "high",
            "content": ["msgtype": "m.text", "body": "I'm floating in a most peculiar way.", "other": 1],
            "counts": ["unread": 2, "missed_calls": 1], "devices": devices,
        ]
        for (key, value) in changes { notification[key] = value is NSNull ? nil : value }
        let data = try JSONSerialization.data(withJSONObject: ["notification": notification])
        return String(decoding: data, as: UTF8.self)
    }

    static func notify(_ server: SyncTestServer, _ body: String) async throws -> (status: HTTPResponse.Status, body: String) {
        let response = try await server.http { client in
            try await client.post("/_matrix/push/v1/notify", headers: [.contentType: "application/json"], body: ByteBuffer(string: body))
        }
        return (response.status, response.body.map { String(buffer: $0) } ?? "")
    }

    static func alert(_ push: APNSEmulatorNotification) throws -> [String: Any] {
        let aps = try #require(try DeliveryEndToEndTests.json(push)["aps"] as? [String: Any])
        return try #require(aps["alert"] as? [String: Any])
    }

    /// Sygnal's large-fields request: a 3-byte `⚑` straddles byte 1024 of the room name. Synapse
    /// would retry a 400 for a day, so the names (and the body) are shortened at a character
    /// boundary, and the push still fits Apple's 4096 bytes.
    @Test func longNamesAndBodiesAreShortenedNotRefused() async throws {
        let appID = "com.example.apns"
        try await SyncTestServer.with(delivery: true, configure: {
            $0.apps[0].matrixAppIDs = [appID]
            $0.apps[0].delivery.strategy = .content  // the text goes on the wire, to be seen
        }) { server in
            let roomName = String(repeating: "xo", count: 510) + "⚑" + String(repeating: "ox", count: 600)
            let displayName = String(repeating: "Ziggy ", count: 170) + "Stardust"  // 1028 bytes
            let body = String(repeating: "é", count: 6000)  // 12,000 bytes
            let (first, second) = (Self.token(1), Self.token(2))

            let named = try Self.notification(
                devices: [Self.device(appID: appID, pushkey: first.pushkey)],
                ["room_name": roomName, "sender_display_name": displayName,
                 "content": ["msgtype": "m.text", "body": body]])
            let answer = try await Self.notify(server, named)
            #expect(answer.status == .ok, "\(answer.body)")
            #expect(answer.body == #"{"rejected":[]}"#)
            let push = try #require(try await server.pushes(to: first.hex, count: 1).first)
            #expect(push.payload.count <= 4096)
            let alert = try Self.alert(push)
            // 1020 bytes of name, then the ellipsis: the `⚑` that would not fit whole is gone.
            #expect(alert["title"] as? String == String(roomName.prefix(1020)) + "…")
            let shownBody = try #require(alert["body"] as? String)
            #expect(shownBody.hasSuffix("…") && shownBody.dropLast().allSatisfy { $0 == "é" })
            #expect(shownBody.utf8.count > 1000, "shortened to fit, not dropped")

            // No room name: the sender's display name is the title, shortened the same way.
            let unnamed = try Self.notification(
                devices: [Self.device(appID: appID, pushkey: second.pushkey)],
                ["room_name": NSNull(), "sender_display_name": displayName])
            #expect(try await Self.notify(server, unnamed).body == #"{"rejected":[]}"#)
            let pushed = try #require(try await server.pushes(to: second.hex, count: 1).first)
            let title = try #require(try Self.alert(pushed)["title"] as? String)
            #expect(title.utf8.count <= 1024 && title.hasSuffix("…") && displayName.hasPrefix(String(title.dropLast())))
        }
    }

    /// A pusher set a day ago whose app was removed ten minutes ago, before Beckon took over from
    /// Sygnal: Apple's 410 is later than the pusher's `pushkey_ts`, though earlier than Beckon's
    /// first sight of it, so it counts (rule 8) and the next notify rejects the pushkey. A
    /// `pushkey_ts` in the future counts as now, so the same 410 does not touch that pusher.
    @Test func aPusherIsDatedByItsPushkeyTS() async throws {
        let appID = "com.example.apns"
        try await SyncTestServer.with(delivery: true, configure: {
            $0.apps[0].matrixAppIDs = [appID]
            $0.apps[0].delivery.strategy = .serviceExtension
        }) { server in
            let now = Date()
            let (set, future) = (Self.token(3), Self.token(4))
            for token in [set, future] {
                try server.emulator.registerDevice(token: token.hex, bundleID: "com.example.chat")
                try server.emulator.unregisterDevice(token: token.hex, at: now.addingTimeInterval(-600))
            }
            let devices = [
                Self.device(appID: appID, pushkey: set.pushkey, pushkeyTS: Int(now.timeIntervalSince1970) - 86400),
                Self.device(appID: appID, pushkey: future.pushkey, pushkeyTS: Int(now.timeIntervalSince1970) + 365 * 86400),
            ]
            let request = try Self.notification(devices: devices)
            // Beckon answers once the message is stored, before Apple has answered.
            #expect(try await Self.notify(server, request).body == #"{"rejected":[]}"#)
            try await server.waitUntil {
                try await server.store.pushRecords(appID: "chat", since: Date(timeIntervalSince1970: 0))
                    .filter { $0.apnsReason == "Unregistered" }.count == 2
            }

            #expect(try await Self.notify(server, request).body == #"{"rejected":["\#(set.pushkey)"]}"#)
            let kept = DropInDevice.ref(app: "chat", source: .matrix, key: "\(appID)\u{0}\(future.pushkey)")
            #expect(try await server.store.device(kept)?.pushToken == future.hex, "registered now: Apple's 410 is older")
        }
    }

    /// `matrix.app-ids` entries as Sygnal's app id patterns: `*` and `?` globs; an exact entry
    /// wins over a glob, and an id two apps' globs match is rejected, not guessed.
    @Test func appIDsMayBeGlobs() async throws {
        try await SyncTestServer.with(delivery: true, configure: {
            $0.apps[0].matrixAppIDs = ["im.example.chat.*", "org.example.v?"]
            $0.apps[0].matrixSandboxAppIDs = ["im.example.chat.ios.dev"]
            $0.apps[0].delivery.strategy = .serviceExtension
            $0.apps[1].matrixAppIDs = ["im.example.*.ios", "im.example.chat.legacy"]
        }) { server in
            // A token of its own per pusher app id: a token registered again moves to the newest device.
            let appIDs = [
                "im.example.chat.ipad", "org.example.v2", "org.example.v10", "im.example.chat.ios.dev",
                "im.example.chat.legacy", "im.example.mail.ios", "im.example.chat.ios", "IM.EXAMPLE.CHAT.IPAD",
            ]
            func token(_ appID: String) -> (hex: String, pushkey: String) { Self.token(UInt8(10 + appIDs.firstIndex(of: appID)!)) }
            /// "accepted", "rejected", or the answer itself.
            func answer(_ appID: String) async throws -> String {
                let pushkey = token(appID).pushkey
                let body = try await Self.notify(server, try Self.notification(devices: [Self.device(appID: appID, pushkey: pushkey)])).body
                return [#"{"rejected":[]}"#: "accepted", #"{"rejected":["\#(pushkey)"]}"#: "rejected"][body] ?? body
            }
            func device(_ app: String, _ appID: String) async throws -> Device? {
                try await server.store.device(DropInDevice.ref(app: app, source: .matrix, key: "\(appID)\u{0}\(token(appID).pushkey)"))
            }
            let (accepted, rejected) = ("accepted", "rejected")

            #expect(try await answer("im.example.chat.ipad") == accepted)
            #expect(try await device("chat", "im.example.chat.ipad")?.environment == .production)
            let push = try #require(try await server.pushes(to: token("im.example.chat.ipad").hex, count: 1).first)
            #expect(try DeliveryEndToEndTests.json(push)["event_id"] as? String == "$qTOWWTEL48yPm3uT-gdNhFcoHxfKbZuqRVnnWWSkGBs")

            #expect(try await answer("org.example.v2") == accepted)
            #expect(try await answer("org.example.v10") == rejected, "? is one character")
            // Exact entries win over globs: chat's sandbox id over its own glob, mail's over chat's.
            #expect(try await answer("im.example.chat.ios.dev") == accepted)
            #expect(try await device("chat", "im.example.chat.ios.dev")?.environment == .sandbox)
            #expect(try await answer("im.example.chat.legacy") == accepted)
            #expect(try await device("mail", "im.example.chat.legacy") != nil)
            #expect(try await answer("im.example.mail.ios") == accepted)
            // Both apps' globs match: ambiguous, as Sygnal rejects it.
            #expect(try await answer("im.example.chat.ios") == rejected)
            #expect(try await answer("IM.EXAMPLE.CHAT.IPAD") == rejected, "case counts")
        }
        #expect(MatrixAppIDs.matches("a*b*c", "aXbYbZc") && MatrixAppIDs.matches("*", ""))
        #expect(!MatrixAppIDs.matches("a*b?", "aXbYZ") && !MatrixAppIDs.matches("a*", "ba"))
    }

    /// The spec's `tweaks`, `counts` and `data` are objects; anything else is a 400 `M_BAD_JSON`
    /// naming the field, as Sygnal refuses them.
    @Test func tweaksCountsAndDataMustBeObjects() async throws {
        try await APITestFixture.with(configure: DropInTests.configure) { _, client in
            let pushkey = Self.token(6).pushkey
            var tweaks = Self.device(appID: DropInTests.matrixAppID, pushkey: pushkey)
            tweaks["tweaks"] = "bing"
            var data = Self.device(appID: DropInTests.matrixAppID, pushkey: pushkey)
            data["data"] = ["event_id_only"]
            let cases = [
                ("notification.devices[0].tweaks", try Self.notification(devices: [tweaks])),
                ("notification.counts", try Self.notification(
                    devices: [Self.device(appID: DropInTests.matrixAppID, pushkey: pushkey)], ["counts": 2])),
                ("notification.devices[0].data", try Self.notification(devices: [data])),
            ]
            for (field, body) in cases {
                let response = try await DropInTests.notify(client, body)
                #expect(response.status == .badRequest, "\(field)")
                let json = try #require(APITestFixture.json(response))
                #expect(json["errcode"]?.string == "M_BAD_JSON")
                #expect(json["error"]?.string?.hasPrefix("\(field): must be an object") == true, "\(json)")
            }
            // An object is fine (Sygnal's `{"sound": "bing"}`, the spec's example).
            var fine = Self.device(appID: DropInTests.matrixAppID, pushkey: pushkey)
            fine["tweaks"] = ["sound": "bing"]
            #expect(try await DropInTests.notify(client, try Self.notification(devices: [fine])).status == .ok)
        }
    }

    static func with(_ body: @escaping @Sendable (SyncTestServer) async throws -> Void) async throws {
        try await SyncTestServer.with(delivery: true, configure: {
            $0.apps[0].matrixAppIDs = ["im.example.ios"]
            $0.apps[0].delivery.strategy = .serviceExtension  // Element's model
        }, body)
    }

    static func aps(_ push: APNSEmulatorNotification) throws -> [String: Any] {
        try #require(try DeliveryEndToEndTests.json(push)["aps"] as? [String: Any])
    }

    /// Sygnal sends `prio: low` at priority 5, and no sound unless the pusher's payload asks;
    /// a push rule's `tweaks.sound` is honoured too.
    @Test func lowPriorityIsFiveAndAnAlertSoundsOnlyWhenAsked() async throws {
        try await Self.with { server in
            let quiet = Self.token(1), loud = Self.token(2)
            _ = try await Self.notify(server, try Self.notification(
                devices: [Self.device(appID: "im.example.ios", pushkey: quiet.pushkey)], ["prio": "low"]))
            var ringing = Self.device(appID: "im.example.ios", pushkey: loud.pushkey)
            ringing["tweaks"] = ["sound": "default", "highlight": true]
            _ = try await Self.notify(server, try Self.notification(devices: [ringing]))
            let low = try #require(try await server.pushes(to: quiet.hex, count: 1).first)
            #expect(low.priority == 5)
            #expect(try Self.aps(low)["sound"] == nil)
            let high = try #require(try await server.pushes(to: loud.hex, count: 1).first)
            #expect(high.priority == 10)
            #expect(try Self.aps(high)["sound"] as? String == "default")
        }
    }

    /// Element registers its pusher with a `default_payload` (its extension's fallback text,
    /// `mutable-content`, `content-available`): the alert carries it, in place of Beckon's own
    /// generic text, with the pusher's other keys beside `aps`; the badge counts unread messages
    /// and missed calls, as Sygnal's.
    @Test func aPushersDefaultPayloadShapesTheAlert() async throws {
        try await Self.with { server in
            let token = Self.token(3)
            var pusher = Self.device(appID: "im.example.ios", pushkey: token.pushkey)
            pusher["data"] = [
                "format": "event_id_only",
                "default_payload": [
                    "aps": ["mutable-content": 1, "content-available": 1, "alert": ["loc-key": "Notification", "loc-args": []]],
                    "pusher_notification_client_identifier": "a1b2",
                ],
            ]
            let answer = try await Self.notify(server, try Self.notification(devices: [pusher]))
            #expect(answer.body.contains(#""rejected":[]"#))
            let push = try #require(try await server.pushes(to: token.hex, count: 1).first)
            let payload = try DeliveryEndToEndTests.json(push)
            #expect(payload["pusher_notification_client_identifier"] as? String == "a1b2")
            #expect(payload["event_id"] as? String == "$qTOWWTEL48yPm3uT-gdNhFcoHxfKbZuqRVnnWWSkGBs")
            let aps = try Self.aps(push)
            #expect((aps["alert"] as? [String: Any])?["loc-key"] as? String == "Notification")
            #expect(aps["mutable-content"] as? Int == 1)
            #expect(aps["content-available"] as? Int == 1)
            #expect(aps["badge"] as? Int == 3, "2 unread + 1 missed call")
        }
    }

    /// After a read, Synapse sends counts without an event (`_send_badge`): Sygnal pushes the
    /// badge alone, and so does Beckon, so the icon's count goes down.
    @Test func countsWithoutAnEventPushTheBadgeAlone() async throws {
        try await Self.with { server in
            let token = Self.token(4)
            let body = try Self.notification(
                devices: [Self.device(appID: "im.example.ios", pushkey: token.pushkey)],
                ["event_id": NSNull(), "type": NSNull(), "room_id": NSNull(), "sender": NSNull(), "sender_display_name": NSNull(),
                 "room_name": NSNull(), "room_alias": NSNull(), "content": NSNull(), "counts": ["unread": 0]])
            let answer = try await Self.notify(server, body)
            #expect(answer.status == .ok)
            let push = try #require(try await server.pushes(to: token.hex, count: 1).first)
            #expect(push.pushType == .alert)
            let payload = try DeliveryEndToEndTests.json(push)
            #expect(payload.count == 1, "aps alone: \(push.payloadString)")
            #expect(try Self.aps(push) as? [String: Int] == ["badge": 0])
        }
    }

    /// A `default_payload` that is not an object: Sygnal rejects the pushkey.
    @Test func aDefaultPayloadThatIsNotAnObjectRejectsThePushkey() async throws {
        try await Self.with { server in
            let token = Self.token(5)
            var pusher = Self.device(appID: "im.example.ios", pushkey: token.pushkey)
            pusher["data"] = ["default_payload": "aps"]
            let answer = try await Self.notify(server, try Self.notification(devices: [pusher]))
            #expect(answer.status == .ok)
            #expect(answer.body.contains(token.pushkey))
        }
    }
}
