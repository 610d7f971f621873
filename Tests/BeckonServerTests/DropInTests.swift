import APNSEmulator
import BeckonXMPP
import Logging
@testable import BeckonServer
import BeckonStore
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Testing

/// The drop-ins (docs/drop-ins.md): Beckon in Sygnal's place for a Matrix homeserver, and in
/// gorush's for a backend, each with the protocol's own requests and answers, and the push that
/// reaches the APNs emulator through the planner and the outbox.
@Suite struct DropInTests {
    static let matrixAppID = "org.example.chat.ios"
    /// The spec's example pushkey is not a token; this one is 32 bytes, as Apple's are.
    static let tokenBytes = Data((0..<32).map { UInt8($0 * 7 % 256) })
    static var token: String { tokenBytes.map { String(format: "%02x", $0) }.joined() }
    static var pushkey: String { tokenBytes.base64EncodedString() }
    static let gorushToken = String(repeating: "d4", count: 32)

    static func configure(_ configuration: inout BeckonServerConfiguration) {
        configuration.apps[0].matrixAppIDs = [matrixAppID]
        configuration.apps[0].matrixSandboxAppIDs = [matrixAppID + ".dev"]
        configuration.apps[0].gorush = .open
        configuration.apps[0].delivery.strategy = .serviceExtension
        configuration.apps[1].gorush = .key
    }

    /// The Matrix push gateway API's example request, with a real pushkey.
    static func matrixRequest(pushkey: String = pushkey, appID: String = matrixAppID, pushkeyTS: Int? = nil) -> String {
        """
        {"notification": {"content": {"body": "I'm floating in a most peculiar way.", "msgtype": "m.text"},
          "counts": {"missed_calls": 1, "unread": 2},
          "devices": [{"app_id": "\(appID)", "data": {"format": "event_id_only"}, "pushkey": "\(pushkey)",
            "pushkey_ts": \(pushkeyTS ?? 12345678), "tweaks": {"sound": "bing"}}],
          "event_id": "$3957tyerfgewrf384", "prio": "high", "room_alias": "#exampleroom:matrix.org",
          "room_id": "!slw48wfj34rtnrf:example.com", "room_name": "Mission Control",
          "sender": "@exampleuser:matrix.org", "sender_display_name": "Major Tom", "type": "m.room.message",
          "user_is_target": false}}
        """
    }

    static func notify(_ client: some TestClientProtocol, _ body: String) async throws -> TestResponse {
        try await client.execute(
            uri: "/_matrix/push/v1/notify", method: .post, headers: [.contentType: "application/json"],
            body: ByteBuffer(string: body))
    }

    @Test func matrixNotifyRegistersThePusherAndAnswersInTheGatewaysForm() async throws {
        try await APITestFixture.with(configure: Self.configure) { fixture, client in
            let accepted = try await Self.notify(client, Self.matrixRequest())
            #expect(accepted.status == .ok)
            #expect(String(buffer: accepted.body) == #"{"rejected":[]}"#)
            let ref = DropInDevice.ref(app: "chat", source: .matrix, key: "\(Self.matrixAppID)\u{0}\(Self.pushkey)")
            let device = try #require(try await fixture.store.device(ref))
            #expect(device.pushToken == Self.token)
            #expect(!device.id.contains(Self.pushkey) && !device.id.contains(Self.token), "the id gives the key away")

            // An app id no app serves, and a pushkey that is no token: rejected, the rest stays.
            let unknown = try await Self.notify(client, Self.matrixRequest(appID: "im.other.app"))
            #expect(String(buffer: unknown.body) == #"{"rejected":["\#(Self.pushkey)"]}"#)
            let garbage = try await Self.notify(client, Self.matrixRequest(pushkey: "not base64!"))
            #expect(String(buffer: garbage.body) == #"{"rejected":["not base64!"]}"#)

            // Counts only (the unread count changed): the badge is pushed alone, so the pusher's
            // device is registered (MatrixDropInTests checks the push).
            let countsOnly = #"{"notification": {"counts": {"unread": 0}, "devices": [{"app_id": "\#(Self.matrixAppID)", "pushkey": "\#(Data(repeating: 9, count: 32).base64EncodedString())"}]}}"#
            #expect(String(buffer: try await Self.notify(client, countsOnly).body) == #"{"rejected":[]}"#)
            let badgeOnly = DropInDevice.ref(app: "chat", source: .matrix, key: "\(Self.matrixAppID)\u{0}\(Data(repeating: 9, count: 32).base64EncodedString())")
            #expect(try await fixture.store.device(badgeOnly) != nil)
            // A development build's pusher: its tokens are sandbox tokens.
            _ = try await Self.notify(client, Self.matrixRequest(appID: Self.matrixAppID + ".dev"))
            let dev = DropInDevice.ref(app: "chat", source: .matrix, key: "\(Self.matrixAppID).dev\u{0}\(Self.pushkey)")
            #expect(try await fixture.store.device(dev)?.environment == .sandbox)

            // Errors in the Matrix form, not Beckon's.
            let notJSON = try await Self.notify(client, "{nope")
            #expect(notJSON.status == .badRequest)
            #expect(APITestFixture.json(notJSON)?["errcode"]?.string == "M_NOT_JSON")
            let noDevices = try await Self.notify(client, #"{"notification": {"event_id": "$e"}}"#)
            #expect(noDevices.status == .badRequest)
            #expect(APITestFixture.json(noDevices)?["errcode"]?.string == "M_BAD_JSON")
        }
    }

    @Test func gorushPushAnswersCountsAndLogsAsGorushDoes() async throws {
        try await APITestFixture.with(configure: Self.configure) { fixture, client in
            let body = """
                {"notifications": [
                  {"tokens": ["\(Self.gorushToken)", "xyz"], "platform": 1, "message": "Hello World iOS!",
                   "topic": "com.example.chat", "badge": 3, "data": {"key1": "welcome", "key2": 2}},
                  {"tokens": ["android-token"], "platform": 2, "message": "Hello World Android!"}]}
                """
            let answer = try await client.execute(
                uri: "/api/push", method: .post, headers: [.contentType: "application/json"], body: ByteBuffer(string: body))
            #expect(answer.status == .ok)
            let json = try #require(APITestFixture.json(answer))
            #expect(json["counts"]?.number == 1)
            #expect(json["success"]?.string == "ok")
            guard case .array(let logs)? = json["logs"] else { Issue.record("no logs: \(json)"); return }
            #expect(logs.compactMap { $0["token"]?.string } == ["xyz", "android-token"])
            #expect(logs.allSatisfy { $0["type"]?.string == "failed-push" })
            let ref = DropInDevice.ref(app: "chat", source: .gorush, key: Self.gorushToken)
            #expect(try await fixture.store.device(ref)?.pushToken == Self.gorushToken)

            // `mail` takes gorush requests with its API key only.
            let mail = #"{"notifications": [{"tokens": ["\#(Self.gorushToken)"], "platform": 1, "message": "m", "topic": "com.example.mail"}]}"#
            let anonymous = try await client.execute(
                uri: "/api/push", method: .post, headers: [.contentType: "application/json"], body: ByteBuffer(string: mail))
            #expect(anonymous.status == .unauthorized)
            #expect(APITestFixture.json(anonymous)?["message"]?.string != nil)
            let keyed = try await client.execute(
                uri: "/api/push", method: .post, headers: APITestFixture.headers(bearer: fixture.mailKey), body: ByteBuffer(string: mail))
            #expect(keyed.status == .ok)
            let wrongApp = try await client.execute(
                uri: "/api/push", method: .post, headers: APITestFixture.headers(bearer: fixture.chatKey), body: ByteBuffer(string: mail))
            #expect(wrongApp.status == .forbidden)
            let unknownTopic = try await client.execute(
                uri: "/api/push", method: .post, headers: [.contentType: "application/json"],
                body: ByteBuffer(string: mail.replacingOccurrences(of: "com.example.mail", with: "com.example.none")))
            #expect(unknownTopic.status == .badRequest)
            // `data` past limits.push-extras-bytes: refused before anything is pushed.
            let huge = #"{"notifications": [{"tokens": ["\#(Self.gorushToken)"], "platform": 1, "topic": "com.example.chat", "data": {"blob": "\#(String(repeating: "x", count: 3000))"}}]}"#
            let tooLarge = try await client.execute(
                uri: "/api/push", method: .post, headers: [.contentType: "application/json"], body: ByteBuffer(string: huge))
            #expect(tooLarge.status == .contentTooLarge)
            #expect(APITestFixture.json(tooLarge)?["message"]?.string?.contains("limits.push-extras-bytes") == true)
            let empty = try await client.execute(
                uri: "/api/push", method: .post, headers: [.contentType: "application/json"], body: ByteBuffer(string: #"{"notifications": []}"#))
            #expect(empty.status == .badRequest)
        }
    }

    /// End to end: the homeserver's notify becomes a push at the emulator carrying the event's
    /// ids and the homeserver's badge, and no content (`event_id_only`); once Apple says the
    /// token is gone (410), the next notify answers it rejected, until the pusher is set again.
    @Test func aMatrixNotifyReachesTheEmulatorAndA410BecomesRejected() async throws {
        try await SyncTestServer.with(delivery: true, configure: Self.configure) { server in
            func notify(_ body: String) async throws -> String {
                let response = try await server.http { client in
                    try await client.post(
                        "/_matrix/push/v1/notify", headers: [.contentType: "application/json"], body: ByteBuffer(string: body))
                }
                return response.body.map { String(buffer: $0) } ?? ""
            }
            #expect(try await notify(Self.matrixRequest()) == #"{"rejected":[]}"#)
            let push = try #require(try await server.pushes(to: Self.token, count: 1).first)
            let payload = try DeliveryEndToEndTests.json(push)
            #expect(payload["event_id"] as? String == "$3957tyerfgewrf384")
            #expect(payload["room_id"] as? String == "!slw48wfj34rtnrf:example.com")
            #expect(payload["unread_count"] as? Int == 2)
            let aps = try #require(payload["aps"] as? [String: Any])
            #expect(aps["badge"] as? Int == 3, "the homeserver's counts: 2 unread, 1 missed call (as Sygnal adds them)")
            #expect(aps["mutable-content"] as? Int == 1, "service-extension: the extension fetches the event")
            #expect(!push.payloadString.contains("floating") && !push.payloadString.contains("Major Tom"), "event_id_only")

            try server.emulator.unregisterDevice(token: Self.token)
            #expect(try await notify(Self.matrixRequest()) == #"{"rejected":[]}"#, "Apple has not answered yet")
            let ref = DropInDevice.ref(app: "chat", source: .matrix, key: "\(Self.matrixAppID)\u{0}\(Self.pushkey)")
            try await server.waitUntil { try await server.store.device(ref)?.pushToken == nil }
            #expect(try await notify(Self.matrixRequest()) == #"{"rejected":["\#(Self.pushkey)"]}"#)
            // The user set the pusher again (a later pushkey_ts, in whole seconds): taken, and pushed.
            try await Task.sleep(for: .milliseconds(1100))
            let later = Int(Date().timeIntervalSince1970)
            try server.emulator.registerDevice(token: Self.token, bundleID: "com.example.chat")
            #expect(try await notify(Self.matrixRequest(pushkeyTS: later)) == #"{"rejected":[]}"#)
            #expect(try await server.store.device(ref)?.pushToken == Self.token)
        }
    }

    /// End to end: a gorush request becomes an alert with its text (the app's strategy is
    /// `content`) and its `data` keys at the top of the payload.
    @Test func aGorushPushReachesTheEmulatorWithItsDataKeys() async throws {
        try await SyncTestServer.with(delivery: true, configure: {
            Self.configure(&$0)
            $0.apps[0].delivery.strategy = .content
        }) { server in
            let body = """
                {"notifications": [{"tokens": ["\(Self.gorushToken)"], "platform": 1, "title": "Lunch",
                  "message": "Pizza at noon?", "topic": "com.example.chat", "badge": 5, "sound": "default",
                  "data": {"thread": "t-42", "aps": {"alert": "not theirs to set"}}}]}
                """
            let response = try await server.http { client in
                try await client.post("/api/push", headers: [.contentType: "application/json"], body: ByteBuffer(string: body))
            }
            #expect(response.status == .ok)
            let push = try #require(try await server.pushes(to: Self.gorushToken, count: 1).first)
            #expect(push.pushType == .alert)
            let payload = try DeliveryEndToEndTests.json(push)
            #expect(payload["thread"] as? String == "t-42")
            let aps = try #require(payload["aps"] as? [String: Any])
            let alert = try #require(aps["alert"] as? [String: Any])
            #expect(alert["title"] as? String == "Lunch")
            #expect(alert["body"] as? String == "Pizza at noon?")
            #expect(aps["badge"] as? Int == 5)
        }
    }

    static let xmpp = XMPPSettings(
        host: "127.0.0.1", componentJID: "push.localhost", componentSecret: "component-secret-0123456789", appID: "chat")

    /// XEP-0357: the app registers its token and gets the component's jid, a node and a secret;
    /// with a user token of `xmpp.app` (or none when registration is open).
    @Test func anXMPPRegistrationGivesTheJidANodeAndItsSecret() async throws {
        try await APITestFixture.with(configure: { $0.xmpp = Self.xmpp }) { fixture, client in
            let body = ByteBuffer(string: #"{"token": "\#(Self.gorushToken)", "environment": "sandbox"}"#)
            let anonymous = try await client.execute(
                uri: "/v1/xmpp/registrations", method: .post, headers: [.contentType: "application/json"], body: body)
            #expect(anonymous.status == .unauthorized)
            let otherApp = try await client.execute(
                uri: "/v1/xmpp/registrations", method: .post,
                headers: APITestFixture.headers(bearer: fixture.userToken(app: "mail", user: "m")), body: body)
            #expect(otherApp.status == .forbidden)
            let registered = try await client.execute(
                uri: "/v1/xmpp/registrations", method: .post,
                headers: APITestFixture.headers(bearer: fixture.userToken(user: "bob")), body: body)
            #expect(registered.status == .created)
            let json = try #require(APITestFixture.json(registered))
            #expect(json["jid"]?.string == "push.localhost")
            let node = try #require(json["node"]?.string)
            #expect(node == DropInDevice.ref(app: "chat", source: .xmpp, key: Self.gorushToken).deviceID)
            #expect(json["secret"]?.string == Self.xmpp.secret(forNode: node))
            #expect(try await fixture.store.device(DeviceRef(appID: "chat", deviceID: node))?.environment == .sandbox)
            let bad = try await client.execute(
                uri: "/v1/xmpp/registrations", method: .post, headers: APITestFixture.headers(bearer: fixture.userToken(user: "bob")),
                body: ByteBuffer(string: #"{"token": "nope"}"#))
            #expect(bad.status == .badRequest)
        }
        try await APITestFixture.with { _, client in
            let unconfigured = try await client.execute(
                uri: "/v1/xmpp/registrations", method: .post, headers: [.contentType: "application/json"],
                body: ByteBuffer(string: "{}"))
            #expect(unconfigured.status == .notFound)
        }
    }

    /// What the component answers a publish: a result for a registered node with its secret; a
    /// `cancel` error (which makes the XMPP server drop the registration after a few) for a wrong
    /// secret or an unknown node.
    @Test func anXMPPPublishIsTakenOnlyWithItsNodesSecret() async throws {
        try await APITestFixture.with(configure: {
            $0.xmpp = Self.xmpp
            $0.xmpp?.openRegistration = true
        }) { fixture, client in
            let registered = try await client.execute(
                uri: "/v1/xmpp/registrations", method: .post, headers: [.contentType: "application/json"],
                body: ByteBuffer(string: #"{"token": "\#(Self.gorushToken)"}"#))
            #expect(registered.status == .created, "open registration")
            let node = try #require(APITestFixture.json(registered)?["node"]?.string)
            func publish(node: String, secret: String?) async throws -> String {
                let form = secret.map { "<publish-options><x xmlns='jabber:x:data' type='submit'><field var='secret'><value>\($0)</value></field></x></publish-options>" } ?? ""
                var parser = XMLStreamParser()
                _ = try parser.feed(Array("<stream:stream xmlns='jabber:component:accept' xmlns:stream='http://etherx.jabber.org/streams' id='x'>".utf8))
                let events = try parser.feed(Array("<iq type='set' id='p' from='localhost'><pubsub xmlns='http://jabber.org/protocol/pubsub'><publish node='\(node)'><item/></publish>\(form)</pubsub></iq>".utf8))
                guard case .stanza(let stanza)? = events.first, let publish = PushPublish(stanza) else {
                    throw FixtureError.unexpected("no publish")
                }
                return await fixture.api.xmpp.publish(publish, settings: Self.xmpp, logger: Logger(label: "test"))
                    .xml(inherited: ComponentStateMachine.componentNamespace)
            }
            #expect(try await publish(node: node, secret: Self.xmpp.secret(forNode: node)).contains("type='result'"))
            let messages = try await fixture.store.messages(for: UserRef(appID: "chat", userID: node), after: 0, limit: 10)
            #expect(messages.count == 1, "the publish became a message for the node's device")
            #expect(try await publish(node: node, secret: "wrong").contains("<forbidden"))
            #expect(try await publish(node: node, secret: nil).contains("<forbidden"))
            let stranger = "xmpp-0000"
            #expect(try await publish(node: stranger, secret: Self.xmpp.secret(forNode: stranger)).contains("<item-not-found"))
        }
    }
}
