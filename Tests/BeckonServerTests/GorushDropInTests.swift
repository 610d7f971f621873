import APNSEmulator
@testable import BeckonServer
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Testing

/// gorush's own request shapes (its README's iOS examples and the fields of its
/// `PushNotification`), answered as gorush answers them and checked against what reaches the
/// APNs emulator: the push gorush would send, within Apple's rules (docs/drop-ins.md, "gorush").
@Suite struct GorushDropInTests {
    static let token = String(repeating: "d4", count: 32)
    static let other = String(repeating: "e5", count: 32)

    /// Posts `entries` (JSON objects, `tokens` and `platform` added) to `/api/push`.
    static func push(
        _ server: SyncTestServer, _ entries: [String], contentType: String? = "application/json"
    ) async throws -> (status: HTTPResponse.Status, body: [String: Any]) {
        let body = #"{"notifications": [\#(entries.joined(separator: ","))]}"#
        var fields: HTTPFields = [:]
        if let contentType { fields[.contentType] = contentType }
        let headers = fields
        let response = try await server.http { client in
            try await client.post("/api/push", headers: headers, body: ByteBuffer(string: body))
        }
        let json = response.body.flatMap { try? JSONSerialization.jsonObject(with: Data($0.readableBytesView)) as? [String: Any] }
        return (response.status, json ?? [:])
    }

    static func entry(_ fields: String, token: String = token) -> String {
        #"{"tokens": ["\#(token)"], "platform": 1, "topic": "com.example.chat", \#(fields)}"#
    }

    static func with(_ body: @escaping @Sendable (SyncTestServer) async throws -> Void) async throws {
        try await SyncTestServer.with(delivery: true, configure: { $0.apps[0].gorush = .open }, body)
    }

    static func aps(_ push: APNSEmulatorNotification) throws -> [String: Any] {
        try #require(try DeliveryEndToEndTests.json(push)["aps"] as? [String: Any])
    }

    /// The README's first iOS example: a title and a message, nothing else asked.
    @Test func theReadmesBasicExampleIsAnAlertWithNoSoundOrBadge() async throws {
        try await Self.with { server in
            let answer = try await Self.push(server, [Self.entry(#""title": "Hello iOS", "message": "Hello World iOS!""#)])
            #expect(answer.status == .ok)
            #expect(answer.body["counts"] as? Int == 1)
            let push = try #require(try await server.pushes(to: Self.token, count: 1).first)
            #expect(push.pushType == .alert)
            #expect(push.priority == 10)
            let payload = try DeliveryEndToEndTests.json(push)
            #expect(payload["beckon"] == nil, "the app on the other end is not Beckon's client")
            let aps = try Self.aps(push)
            #expect(aps["sound"] == nil, "no sound unless asked")
            #expect(aps["badge"] == nil)
            let alert = try #require(aps["alert"] as? [String: Any])
            #expect(alert["title"] as? String == "Hello iOS")
            #expect(alert["body"] as? String == "Hello World iOS!")
        }
    }

    /// The README's "Close and PLAY" example and its critical-sound example.
    @Test func theReadmesAlertAndCriticalSoundExamplesArriveAsWritten() async throws {
        try await Self.with { server in
            let answer = try await Self.push(server, [
                Self.entry(#""badge": 5, "alert": {"title": "Game Request", "body": "Bob wants to play poker", "action-loc-key": "PLAY"}"#),
                Self.entry(
                    #""message": "You got your emails.", "badge": 9, "sound": {"critical": 1, "name": "default", "volume": 1.0}"#,
                    token: Self.other),
            ])
            #expect(answer.body["counts"] as? Int == 2)
            let game = try Self.aps(try #require(try await server.pushes(to: Self.token, count: 1).first))
            #expect(game["badge"] as? Int == 5)
            #expect((game["alert"] as? [String: Any])?["action-loc-key"] as? String == "PLAY")
            let mail = try Self.aps(try #require(try await server.pushes(to: Self.other, count: 1).first))
            #expect(mail["badge"] as? Int == 9)
            let sound = try #require(mail["sound"] as? [String: Any])
            #expect(sound["critical"] as? Int == 1)
            #expect(sound["name"] as? String == "default")
            #expect(sound["volume"] as? Double == 1)
        }
    }

    /// A backend that uses gorush for background sync: `content_available` alone, or
    /// `push_type: background`, stays silent (Apple: priority 5, `aps` holds only
    /// `content-available`), and its `data` rides beside `aps`.
    @Test func aSilentPushStaysABackgroundPushAtPriorityFive() async throws {
        try await Self.with { server in
            let answer = try await Self.push(server, [
                Self.entry(#""content_available": true, "data": {"sync": "inbox"}"#),
                Self.entry(#""push_type": "background", "content_available": true, "priority": "high""#, token: Self.other),
            ])
            #expect(answer.body["counts"] as? Int == 2)
            for token in [Self.token, Self.other] {
                let push = try #require(try await server.pushes(to: token, count: 1).first)
                #expect(push.pushType == .background)
                #expect(push.priority == 5)
                let payload = try DeliveryEndToEndTests.json(push)
                #expect(payload["aps"] as? [String: Int] == ["content-available": 1])
            }
            let first = try DeliveryEndToEndTests.json(try await server.pushes(to: Self.token, count: 1)[0])
            #expect(first["sync"] as? String == "inbox")
        }
    }

    /// Every APNs field gorush carries reaches APNs: headers and payload.
    @Test func gorushsFieldsReachTheRequest() async throws {
        try await Self.with { server in
            let apnsID = "3B2E1A6C-6E1F-4C3A-9C5B-2A4D7E8F9A01"
            // Two tokens, one apns_id: gorush gives every token of an entry the entry's id.
            _ = try await Self.push(server, [
                #"{"tokens": ["\#(Self.token)", "\#(Self.other)"], "platform": 1, "topic": "com.example.chat", "#
                    + #"""
                    "title": "Standup", "message": "In five minutes", "thread-id": "team-7", "collapse_id": "standup",
                    "apns_id": "\#(apnsID)", "priority": "normal", "mutable_content": true, "category": "MEETING",
                    "interruption_level": "time-sensitive", "url-args": ["meetings", "7"],
                    "alert": {"summary-arg": "Team 7", "summary-arg-count": 2}, "sound": "chime.caf", "badge": -1
                    """# + "}"
            ])
            let second = try #require(try await server.pushes(to: Self.other, count: 1).first)
            let push = try #require(try await server.pushes(to: Self.token, count: 1).first)
            #expect(push.apnsID == apnsID.lowercased())
            #expect(second.apnsID == apnsID.lowercased())
            #expect(push.priority == 5)
            #expect(push.collapseID == "standup")
            let aps = try Self.aps(push)
            #expect(aps["thread-id"] as? String == "team-7")
            #expect(aps["mutable-content"] as? Int == 1)
            #expect(aps["category"] as? String == "MEETING")
            #expect(aps["interruption-level"] as? String == "time-sensitive")
            #expect(aps["url-args"] as? [String] == ["meetings", "7"])
            #expect(aps["sound"] as? String == "chime.caf")
            #expect(aps["badge"] == nil, "gorush leaves a negative badge out")
            let alert = try #require(aps["alert"] as? [String: Any])
            #expect(alert["summary-arg"] as? String == "Team 7")
            #expect(alert["summary-arg-count"] as? Int == 2)
        }
    }

    /// A request sent again with the same `apns_id` is pushed again, as gorush does, and a value
    /// that is not a UUID (APNs: `BadMessageId`) fails only its entry.
    @Test func anAPNsIDIsTheCallersAcrossRequests() async throws {
        try await Self.with { server in
            let apnsID = "0f9e2d4c-1b3a-4e5f-8a7b-6c5d4e3f2a1b"
            let entry = Self.entry(#""message": "again", "apns_id": "\#(apnsID)""#)
            for _ in 0..<2 {
                #expect(try await Self.push(server, [entry]).body["counts"] as? Int == 1)
            }
            let pushes = try await server.pushes(to: Self.token, count: 2)
            #expect(pushes.map(\.apnsID) == [apnsID, apnsID])
            let answer = try await Self.push(server, [Self.entry(#""message": "x", "apns_id": "42""#, token: Self.other)])
            #expect(answer.body["counts"] as? Int == 0)
            let errors = (answer.body["logs"] as? [[String: Any]] ?? []).compactMap { $0["error"] as? String }
            #expect(errors.count == 1)
            #expect(errors.first?.contains("apns_id must be a UUID") == true)
        }
    }

    /// `curl -d '{…}'` says form data; gorush reads the JSON anyway.
    @Test func jsonWithoutItsContentTypeIsTaken() async throws {
        try await Self.with { server in
            let form = try await Self.push(
                server, [Self.entry(#""message": "from curl""#)], contentType: "application/x-www-form-urlencoded")
            #expect(form.status == .ok)
            let none = try await Self.push(server, [Self.entry(#""message": "no type""#, token: Self.other)], contentType: nil)
            #expect(none.status == .ok)
            _ = try await server.pushes(to: Self.token, count: 1)
            _ = try await server.pushes(to: Self.other, count: 1)
        }
    }

    /// The README's Live Activity example beside an ordinary entry: the ordinary one is pushed,
    /// the Live Activity is logged as not pushed, and the batch is not refused.
    @Test func aLiveActivityEntryFailsOnlyItself() async throws {
        try await Self.with { server in
            let liveActivity = #"""
                {"tokens": ["\#(Self.other)"], "platform": 1, "push_type": "liveactivity",
                 "topic": "com.example.chat.push-type.liveactivity", "event": "start", "timestamp": 1685952000,
                 "content-state": {"homeScore": 0, "awayScore": 0}, "attributes-type": "FootballMatchAttributes",
                 "attributes": {"homeTeam": "Team 1"}, "alert": {"title": "Team 1 vs Team 2", "body": "Kick-off!"}}
                """#
            let answer = try await Self.push(server, [Self.entry(#""message": "Hello""#), liveActivity])
            #expect(answer.status == .ok)
            #expect(answer.body["counts"] as? Int == 1)
            let logs = try #require(answer.body["logs"] as? [[String: Any]])
            #expect(logs.count == 1)
            #expect(logs.first?["token"] as? String == Self.other)
            #expect((logs.first?["error"] as? String)?.contains("Live Activity") == true)
            _ = try await server.pushes(to: Self.token, count: 1)
            #expect(server.emulator.deliveries(to: Self.other).isEmpty)
        }
    }

    /// What Apple would not take is said in the answer, token by token, and nothing is pushed.
    @Test func aPushAppleWouldRefuseIsLoggedNotSent() async throws {
        try await Self.with { server in
            let answer = try await Self.push(server, [
                Self.entry(#""push_type": "background", "message": "visible?""#),
                Self.entry(#""message": "x", "interruption_level": "urgent""#, token: Self.other),
            ])
            #expect(answer.status == .ok)
            #expect(answer.body["counts"] as? Int == 0)
            let errors = (answer.body["logs"] as? [[String: Any]] ?? []).compactMap { $0["error"] as? String }
            #expect(errors.count == 2)
            #expect(errors.contains { $0.contains("background push shows nothing") })
            #expect(errors.contains { $0.contains("interruption_level must be") })
        }
    }
}
