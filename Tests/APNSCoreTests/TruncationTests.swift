import APNSCore
import Foundation
import Testing

@Suite struct TruncationTests {
    let token = try! APNSDeviceToken(hex: String(repeating: "0f", count: 32))

    @Test(arguments: ["a", "é", "🙂", "👩‍👩‍👧", "\"", "\n", "\u{01}"])
    func truncatedBodyFitsAndStaysValid(unit: String) throws {
        let body = String(repeating: unit, count: 5000)
        let request = try APNSRequest(
            APNSAlertNotification(alert: .init(title: "T", body: body), custom: ["id": "m1"], allowsTruncation: true),
            to: token, bundleID: "a.b")
        #expect(request.payload.count <= 4096)
        // Valid JSON and valid UTF-8, ending with the ellipsis after whole characters.
        let object = try #require(JSONSerialization.jsonObject(with: Data(request.payload)) as? [String: Any])
        let alert = try #require((object["aps"] as? [String: Any])?["alert"] as? [String: Any])
        let shortened = try #require(alert["body"] as? String)
        #expect(shortened.hasSuffix("…"))
        #expect(shortened.dropLast().allSatisfy { String($0) == unit })
        #expect(object["id"] as? String == "m1")
        // Close to the limit, not far below it.
        #expect(request.payload.count > 4096 - 40)
    }

    @Test func withoutPermissionOversizeIsAnError() {
        #expect(throws: APNSPayloadError.self) {
            try APNSRequest(APNSAlertNotification(alert: .init(body: String(repeating: "a", count: 5000))), to: token, bundleID: "a.b")
        }
    }

    @Test func locArgsAreShortenedWhenThereIsNoBody() throws {
        let request = try APNSRequest(
            APNSAlertNotification(alert: .init(locKey: "MSG_FROM", locArgs: ["Anna", String(repeating: "z", count: 6000)]), allowsTruncation: true),
            to: token, bundleID: "a.b")
        #expect(request.payload.count <= 4096)
        let alert = try #require(((try JSONSerialization.jsonObject(with: Data(request.payload)) as? [String: Any])?["aps"] as? [String: Any])?["alert"] as? [String: Any])
        let args = try #require(alert["loc-args"] as? [String])
        #expect(args[0] == "Anna")
        #expect(args[1].hasSuffix("…"))
    }

    @Test func customDataAloneTooLargeCannotBeTruncated() {
        #expect(throws: APNSPayloadError.self) {
            try APNSRequest(
                APNSAlertNotification(alert: .init(body: "hi"), custom: ["blob": .string(String(repeating: "b", count: 5000))], allowsTruncation: true),
                to: token, bundleID: "a.b")
        }
    }
}
