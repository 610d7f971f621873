import BeckonClient
import BeckonClientTestSupport
import BeckonJSON
import Foundation
import Testing

@Suite struct NotificationContentTests {
    @Test func thePushsAlertIsTheFallback() {
        let content = NotificationContent(apsOf: [
            "aps": ["alert": ["loc-key": "BECKON_NEW_MESSAGE", "loc-args": ["Anna"]], "thread-id": "t", "badge": 3],
            "beckon": ["reason": "alert"],
        ])
        #expect(content.locKey == "BECKON_NEW_MESSAGE" && content.locArgs == ["Anna"])
        #expect(content.threadID == "t" && content.badge == 3 && content.hasText)
        #expect(content.userInfo.keys.sorted() == ["beckon"])
        #expect(NotificationContent(apsOf: ["aps": ["alert": "plain"]]).body == "plain")
        #expect(!NotificationContent(apsOf: ["aps": ["badge": 0]]).hasText)
    }

    @Test func userInfoIsReadAsJSON() throws {
        let userInfo: [AnyHashable: Any] = ["aps": ["badge": 1, "alert": ["body": "x"]], "beckon": ["ids": ["m1"], "reason": "alert"]]
        let json = try #require(JSONValue(userInfo: userInfo))
        #expect(json["beckon"]?["ids"] == ["m1"])
        #expect(json["aps"]?["badge"] == 1)
        let back = try #require(json.foundationObject as? [String: Any])
        #expect((back["beckon"] as? [String: Any])?["reason"] as? String == "alert")
    }
}
