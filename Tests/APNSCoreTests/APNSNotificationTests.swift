import APNSCore
import Foundation
import Testing

private let token = try! APNSDeviceToken(hex: String(repeating: "ab", count: 32))

private func json(_ request: APNSRequest) throws -> [String: Any] {
    try #require(JSONSerialization.jsonObject(with: Data(request.payload)) as? [String: Any])
}

private func header(_ request: APNSRequest, _ name: String) -> String? {
    request.headers.first { $0.name == name }?.value
}

@Suite struct APNSNotificationTests {
    @Test func alertHasTopicPriorityAndAps() throws {
        let request = try APNSRequest(
            APNSAlertNotification(
                alert: APNSAlert(title: "Anna", body: "See you at 8"), badge: 3, sound: .default, threadID: "chat-1",
                category: "MESSAGE", mutableContent: true, custom: ["m": "42"], collapseID: "c1"
            ),
            to: token, bundleID: "com.example.chat"
        )
        #expect(request.path == "/3/device/" + String(repeating: "ab", count: 32))
        #expect(header(request, "apns-push-type") == "alert")
        #expect(header(request, "apns-topic") == "com.example.chat")
        #expect(header(request, "apns-priority") == "10")
        #expect(header(request, "apns-collapse-id") == "c1")
        #expect(header(request, "apns-expiration") == nil)
        let body = try json(request)
        let aps = try #require(body["aps"] as? [String: Any])
        let alert = try #require(aps["alert"] as? [String: Any])
        #expect(alert["title"] as? String == "Anna")
        #expect(alert["body"] as? String == "See you at 8")
        #expect(aps["badge"] as? Int == 3)
        #expect(aps["sound"] as? String == "default")
        #expect(aps["thread-id"] as? String == "chat-1")
        #expect(aps["category"] as? String == "MESSAGE")
        #expect(aps["mutable-content"] as? Int == 1)
        #expect(aps["content-available"] == nil)
        #expect(body["m"] as? String == "42")
    }

    @Test func backgroundIsPriorityFiveWithOnlyContentAvailable() throws {
        let request = try APNSRequest(
            APNSBackgroundNotification(custom: ["since": 17]), to: token, bundleID: "com.example.chat"
        )
        #expect(header(request, "apns-push-type") == "background")
        #expect(header(request, "apns-priority") == "5")
        #expect(header(request, "apns-topic") == "com.example.chat")
        let body = try json(request)
        let aps = try #require(body["aps"] as? [String: Any])
        #expect(aps.count == 1)
        #expect(aps["content-available"] as? Int == 1)
        #expect(body["since"] as? Int == 17)
    }

    @Test func voipGoesToVoipTopicAndExpiresImmediately() throws {
        let request = try APNSRequest(APNSVoIPNotification(custom: ["call": "c9"]), to: token, bundleID: "com.example.chat")
        #expect(header(request, "apns-push-type") == "voip")
        #expect(header(request, "apns-topic") == "com.example.chat.voip")
        #expect(header(request, "apns-expiration") == "0")
        #expect(try json(request)["call"] as? String == "c9")
    }

    @Test(arguments: [
        (APNSPushType.location, "com.example.app.location-query"),
        (.complication, "com.example.app.complication"),
        (.pushtotalk, "com.example.app.voip-ptt"),
        (.controls, "com.example.app.push-type.controls"),
        (.widgets, "com.example.app.push-type.widgets"),
        (.fileprovider, "com.example.app.pushkit.fileprovider"),
        (.liveactivity, "com.example.app.push-type.liveactivity"),
        (.mdm, "com.apple.mgmt.External.1234"),
    ])
    func everyTypeGetsItsTopicSuffix(type: APNSPushType, topic: String) throws {
        let notification: any APNSNotification = switch type {
        case .location: APNSLocationNotification()
        case .complication: APNSComplicationNotification()
        case .pushtotalk: APNSPushToTalkNotification()
        case .controls: APNSControlsNotification()
        case .widgets: APNSWidgetsNotification()
        case .fileprovider: APNSFileProviderNotification(containerIdentifier: "root", domain: "d1")
        case .liveactivity: APNSLiveActivityNotification(event: .update, contentState: ["score": 2], timestamp: Date(timeIntervalSince1970: 1_700_000_000))
        case .mdm: APNSMDMNotification(pushMagic: "magic", topic: "com.apple.mgmt.External.1234")
        default: APNSAlertNotification(badge: 1)
        }
        let request = try APNSRequest(notification, to: token, bundleID: "com.example.app")
        #expect(request.topic == topic)
        #expect(request.pushType == type)
        #expect(header(request, "apns-push-type") == type.rawValue)
        _ = try json(request)  // Valid JSON.
    }

    @Test func typeSpecificPayloads() throws {
        let widgets = try json(APNSRequest(APNSWidgetsNotification(), to: token, bundleID: "a.b"))
        #expect((widgets["aps"] as? [String: Any])?["content-changed"] as? Bool == true)
        let files = try json(APNSRequest(APNSFileProviderNotification(containerIdentifier: "root", domain: "d1"), to: token, bundleID: "a.b"))
        #expect(files["container-identifier"] as? String == "root")
        #expect(files["aps"] == nil)
        let live = try json(APNSRequest(
            APNSLiveActivityNotification(
                event: .start(attributesType: "Match", attributes: ["home": "A"], alert: .init(title: "Kick-off"), inputPushToken: true),
                contentState: ["score": 0], timestamp: Date(timeIntervalSince1970: 1_700_000_000)
            ), to: token, bundleID: "a.b"))
        let aps = try #require(live["aps"] as? [String: Any])
        #expect(aps["event"] as? String == "start")
        #expect(aps["timestamp"] as? Int == 1_700_000_000)
        #expect(aps["attributes-type"] as? String == "Match")
        #expect(aps["input-push-token"] as? Int == 1)
        #expect((aps["content-state"] as? [String: Any])?["score"] as? Int == 0)
    }

    @Test func alertWithNothingToShowIsRefused() {
        #expect(throws: APNSPayloadError.nothingToShow) {
            try APNSRequest(APNSAlertNotification(), to: token, bundleID: "a.b")
        }
    }

    @Test func customApsKeyIsRefused() {
        #expect(throws: APNSPayloadError.reservedCustomKey("aps")) {
            try APNSRequest(APNSBackgroundNotification(custom: ["aps": [:]]), to: token, bundleID: "a.b")
        }
    }

    @Test func collapseIDOver64BytesIsRefused() throws {
        _ = try APNSRequest(APNSAlertNotification(badge: 1, collapseID: String(repeating: "x", count: 64)), to: token, bundleID: "a.b")
        #expect(throws: APNSPayloadError.collapseIDTooLong(bytes: 65)) {
            try APNSRequest(APNSAlertNotification(badge: 1, collapseID: String(repeating: "x", count: 65)), to: token, bundleID: "a.b")
        }
    }

    @Test func sizeLimitsAre4096And5120ForVoIP() throws {
        let filler = String(repeating: "y", count: 4096)
        #expect(throws: APNSPayloadError.self) {
            try APNSRequest(APNSBackgroundNotification(custom: ["f": .string(filler)]), to: token, bundleID: "a.b")
        }
        // The same custom data fits a VoIP push up to 5120 bytes.
        let voip = try APNSRequest(APNSVoIPNotification(custom: ["f": .string(filler)]), to: token, bundleID: "a.b")
        #expect(voip.payload.count > 4096 && voip.payload.count <= 5120)
        #expect(throws: APNSPayloadError.self) {
            try APNSRequest(APNSVoIPNotification(custom: ["f": .string(filler + filler)]), to: token, bundleID: "a.b")
        }
    }

    @Test func expirationAndPriorityHeaders() throws {
        let request = try APNSRequest(
            APNSAlertNotification(badge: 1, priority: .considerPower, expiration: .at(Date(timeIntervalSince1970: 1_800_000_000.7))),
            to: token, bundleID: "a.b")
        #expect(header(request, "apns-priority") == "5")
        #expect(header(request, "apns-expiration") == "1800000000")
        #expect(APNSExpiration(headerValue: "0") == .immediately)
        #expect(APNSExpiration(headerValue: "soon") == nil)
    }

    @Test func apnsIDIsKeptOrAssignedLowercase() throws {
        let id = UUID()
        let kept = try APNSRequest(APNSAlertNotification(badge: 1, apnsID: id), to: token, bundleID: "a.b")
        #expect(kept.apnsID == id)
        #expect(header(kept, "apns-id") == id.uuidString.lowercased())
        let assigned = try APNSRequest(APNSAlertNotification(badge: 1), to: token, bundleID: "a.b")
        #expect(header(assigned, "apns-id")?.count == 36)
    }

    @Test func escapingKeepsJSONValid() throws {
        let text = "quote \" backslash \\ newline \n tab \t bell \u{07} é 🙂"
        let request = try APNSRequest(APNSAlertNotification(alert: .init(body: text)), to: token, bundleID: "a.b")
        let alert = try #require((try json(request)["aps"] as? [String: Any])?["alert"] as? [String: Any])
        #expect(alert["body"] as? String == text)
        // Non-ASCII stays raw UTF-8 (Apple: no \U escapes).
        #expect(String(decoding: request.payload, as: UTF8.self).contains("é 🙂"))
    }
}
