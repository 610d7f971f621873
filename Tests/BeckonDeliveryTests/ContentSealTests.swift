import BeckonSeal
import BeckonProtocol
import APNSCore
import BeckonDelivery
import Foundation
import XCTest

/// Rule 1's opt-in: content sealed per device with AES-256-GCM.
final class ContentSealTests: XCTestCase {
    private let key = Data((0..<32).map { UInt8($0) })
    private let hints = NotificationHints(title: "Anna", subtitle: "Dinner", body: "See you at 8", threadID: "chat-1")

    func testRoundTrip() throws {
        let content = SealedContent(messageID: "m1", title: "Anna", body: "See you at 8", locArgs: ["x"])
        let sealed = try ContentSeal.seal(content, key: key)
        XCTAssertNotNil(Data(base64Encoded: sealed))
        XCTAssertFalse(sealed.contains("Anna"))
        XCTAssertEqual(try ContentSeal.open(sealed, key: key), content)
    }

    func testTamperingWrongKeyAndBadInputFail() throws {
        let sealed = try ContentSeal.seal(SealedContent(messageID: "m1", body: "secret"), key: key)
        var bytes = try XCTUnwrap(Data(base64Encoded: sealed))
        bytes[bytes.count / 2] ^= 0x01
        XCTAssertThrowsError(try ContentSeal.open(bytes.base64EncodedString(), key: key)) {
            XCTAssertEqual($0 as? ContentSealError, .authenticationFailed)
        }
        var otherKey = key
        otherKey[0] ^= 0xFF
        XCTAssertThrowsError(try ContentSeal.open(sealed, key: otherKey)) {
            XCTAssertEqual($0 as? ContentSealError, .authenticationFailed)
        }
        XCTAssertThrowsError(try ContentSeal.open("not base64!", key: key)) {
            XCTAssertEqual($0 as? ContentSealError, .malformed)
        }
        XCTAssertThrowsError(try ContentSeal.open(sealed, key: Data(count: 16))) {
            XCTAssertEqual($0 as? ContentSealError, .badKey(bytes: 16))
        }
    }

    func testContentStrategySealsForADeviceWithAnExtension() throws {
        var device = PlannerDevice.serviceExtension
        device.contentKey = key
        let harness = PlannerHarness(policy: DeliveryPolicy(strategy: .content), device: device)
        let push = try onlyPush(harness.arrive(message("m1", hints: hints, unread: 3), at: 0))
        let json = try payload(push)
        let text = String(decoding: push.notification.encodedPayload(), as: UTF8.self)
        XCTAssertFalse(text.contains("Anna"), "no plaintext on the wire")
        XCTAssertFalse(text.contains("See you"))
        let aps = try XCTUnwrap(json["aps"] as? NSDictionary)
        XCTAssertEqual(
            aps,
            [
                "alert": ["loc-key": "BECKON_NEW_MESSAGE"], "badge": 3, "sound": "default", "thread-id": "chat-1",
                "mutable-content": 1,
            ] as NSDictionary
        )
        let sealed = try XCTUnwrap(try beckon(push)["sealed"] as? String)
        XCTAssertEqual(try beckon(push)["ids"] as? [String], ["m1"])
        XCTAssertEqual(
            try ContentSeal.open(sealed, key: key),
            SealedContent(messageID: "m1", title: "Anna", subtitle: "Dinner", body: "See you at 8")
        )
    }

    func testKeyedDeviceWithoutExtensionGetsGenericTextNeverPlaintext() throws {
        var device = PlannerDevice.plain
        device.contentKey = key
        let harness = PlannerHarness(policy: DeliveryPolicy(strategy: .content), device: device)
        let push = try onlyPush(harness.arrive(message("m1", hints: hints), at: 0))
        let text = String(decoding: push.notification.encodedPayload(), as: UTF8.self)
        XCTAssertFalse(text.contains("Anna"))
        XCTAssertNil(try beckon(push)["sealed"])
        XCTAssertEqual(try path(payload(push), "aps.alert.loc-key") as? String, "BECKON_NEW_MESSAGE")
    }

    func testLongSealedContentStillFits() throws {
        var device = PlannerDevice.serviceExtension
        device.contentKey = key
        let harness = PlannerHarness(policy: DeliveryPolicy(strategy: .content), device: device)
        let body = String(repeating: "long text ✓ ", count: 600)
        let push = try onlyPush(
            harness.arrive(message("m1", hints: NotificationHints(title: "Anna", body: body)), at: 0)
        )
        let request = try request(push)
        XCTAssertLessThanOrEqual(request.payload.count, 4096)
        let opened = try ContentSeal.open(try XCTUnwrap(try beckon(push)["sealed"] as? String), key: key)
        XCTAssertEqual(opened.title, "Anna")
        let openedBody = try XCTUnwrap(opened.body)
        XCTAssertTrue(openedBody.hasSuffix("…"))
        XCTAssertTrue(body.hasPrefix(String(openedBody.dropLast())))
    }
}
