import BeckonSeal
import BeckonProtocol
import APNSCore
import BeckonDelivery
import Foundation
import Testing

/// Rule 1's opt-in: content sealed per device with AES-256-GCM.
@Suite struct ContentSealTests {
    private let key = Data((0..<32).map { UInt8($0) })
    private let hints = NotificationHints(title: "Anna", subtitle: "Dinner", body: "See you at 8", threadID: "chat-1")

    @Test func roundTrip() throws {
        let content = SealedContent(messageID: "m1", title: "Anna", body: "See you at 8", locArgs: ["x"])
        let sealed = try ContentSeal.seal(content, key: key)
        #expect(Data(base64Encoded: sealed) != nil)
        #expect(!sealed.contains("Anna"))
        #expect(try ContentSeal.open(sealed, key: key) == content)
    }

    @Test func tamperingWrongKeyAndBadInputFail() throws {
        let sealed = try ContentSeal.seal(SealedContent(messageID: "m1", body: "secret"), key: key)
        var bytes = try #require(Data(base64Encoded: sealed))
        bytes[bytes.count / 2] ^= 0x01
        #expect(throws: ContentSealError.authenticationFailed) { try ContentSeal.open(bytes.base64EncodedString(), key: key) }
        var otherKey = key
        otherKey[0] ^= 0xFF
        #expect(throws: ContentSealError.authenticationFailed) { try ContentSeal.open(sealed, key: otherKey) }
        #expect(throws: ContentSealError.malformed) { try ContentSeal.open("not base64!", key: key) }
        #expect(throws: ContentSealError.badKey(bytes: 16)) { try ContentSeal.open(sealed, key: Data(count: 16)) }
    }

    @Test func contentStrategySealsForADeviceWithAnExtension() throws {
        var device = PlannerDevice.serviceExtension
        device.contentKey = key
        let harness = PlannerHarness(policy: DeliveryPolicy(strategy: .content), device: device)
        let push = try onlyPush(harness.arrive(message("m1", hints: hints, unread: 3), at: 0))
        let json = try payload(push)
        let text = String(decoding: push.notification.encodedPayload(), as: UTF8.self)
        #expect(!text.contains("Anna"), "no plaintext on the wire")
        #expect(!text.contains("See you"))
        let aps = try #require(json["aps"] as? NSDictionary)
        #expect(
            aps == [
                "alert": ["loc-key": "BECKON_NEW_MESSAGE"], "badge": 3, "sound": "default", "thread-id": "chat-1",
                "mutable-content": 1,
            ] as NSDictionary
        )
        let sealed = try #require(try beckon(push)["sealed"] as? String)
        #expect(try beckon(push)["ids"] as? [String] == ["m1"])
        #expect(
            try ContentSeal.open(sealed, key: key)
                == SealedContent(messageID: "m1", title: "Anna", subtitle: "Dinner", body: "See you at 8")
        )
    }

    @Test func keyedDeviceWithoutExtensionGetsGenericTextNeverPlaintext() throws {
        var device = PlannerDevice.plain
        device.contentKey = key
        let harness = PlannerHarness(policy: DeliveryPolicy(strategy: .content), device: device)
        let push = try onlyPush(harness.arrive(message("m1", hints: hints), at: 0))
        let text = String(decoding: push.notification.encodedPayload(), as: UTF8.self)
        #expect(!text.contains("Anna"))
        #expect(try beckon(push)["sealed"] == nil)
        #expect(try path(payload(push), "aps.alert.loc-key") as? String == "BECKON_NEW_MESSAGE")
    }

    @Test func longSealedContentStillFits() throws {
        var device = PlannerDevice.serviceExtension
        device.contentKey = key
        let harness = PlannerHarness(policy: DeliveryPolicy(strategy: .content), device: device)
        let body = String(repeating: "long text ✓ ", count: 600)
        let push = try onlyPush(
            harness.arrive(message("m1", hints: NotificationHints(title: "Anna", body: body)), at: 0)
        )
        let request = try request(push)
        #expect(request.payload.count <= 4096)
        let opened = try ContentSeal.open(try #require(try beckon(push)["sealed"] as? String), key: key)
        #expect(opened.title == "Anna")
        let openedBody = try #require(opened.body)
        #expect(openedBody.hasSuffix("…"))
        #expect(body.hasPrefix(String(openedBody.dropLast())))
    }
}
