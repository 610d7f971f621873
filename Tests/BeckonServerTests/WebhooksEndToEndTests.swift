import APNSEmulator
import BeckonEvents
import BeckonJSON
@testable import BeckonServer
import BeckonStore
import Foundation
import Hummingbird
import HummingbirdTesting
import NIOConcurrencyHelpers
import NIOCore
import Testing
import WebhookTestSupport

/// The webhooks over the real node: what a receiver gets for a mixed population, through a
/// spell of 500s, against the traces and what the emulator received.
@Suite struct WebhooksEndToEndTests {
    static let secret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
    static let phoneToken = DeliveryEndToEndTests.token
    static let tabletToken = DeliveryEndToEndTests.otherToken
    static let bobToken = String(repeating: "c3", count: 32)
    static let carolToken = String(repeating: "d4", count: 32)
    static let daveToken = String(repeating: "e5", count: 32)

    static func configure(port: Int) -> (inout BeckonServerConfiguration) -> Void {
        { configuration in
            DeliveryEndToEndTests.fast(&configuration)
            var webhook = WebhookSettings(url: WebhookURL("http://127.0.0.1:\(port)/hooks")!, secret: Self.secret)
            webhook.batchSize = 200
            webhook.retryInitial = 0.1
            webhook.retryMax = 0.4
            configuration.apps[0].events = AppEvents(appID: "chat", webhook: webhook)
        }
    }

    /// Every event the receiver took (answered 2xx), in the order it got them, with each batch's
    /// signature checked.
    static func taken(_ receiver: LoopbackReceiver, answered: NIOLockedValueBox<[Int]>) throws -> [JSONValue] {
        let statuses = answered.withLockedValue { $0 }
        let signer = WebhookSigner(secret: secret)
        return try receiver.received.enumerated().flatMap { index, request -> [JSONValue] in
            guard index < statuses.count, (200..<300).contains(statuses[index]) else { return [] }
            let id = request.headers["webhook-id"] ?? "", timestamp = Int(request.headers["webhook-timestamp"] ?? "") ?? 0
            guard signer.verify(id: id, timestamp: timestamp, body: request.body, header: request.headers["webhook-signature"] ?? "") else {
                throw FixtureError.unexpected("a batch without a valid signature")
            }
            return try JSONParser.parse(request.body)["events"]?.arrayValue ?? []
        }
    }

    static func post(_ server: SyncTestServer, to user: String, ttl: Int) async throws -> String {
        let body = #"{"recipients":{"users":["\#(user)"]},"payload":{"text":"hi"},"ttlSeconds":\#(ttl)}"#
        let response = try await server.http { client in
            try await client.post("/v1/messages", headers: APITestFixture.headers(bearer: server.chatKey), body: ByteBuffer(string: body))
        }
        guard response.status == .accepted, let id = response.body.flatMap({ try? JSONParser.parse(Array($0.readableBytesView)) })?["id"]?.stringValue
        else { throw FixtureError.unexpected("post: \(response.status)") }
        return id
    }

    /// Issue 40's test: 1,000 messages to a mixed population, the receiver answering 500 for its
    /// first seconds. Alice's phone is connected and acknowledges; her tablet is away; Bob's phone
    /// is away; Carol's token is dead; Dave's extension fetches each message. Each message and
    /// device gets exactly one terminal event (delivered or expired), after the message's
    /// accepted, and each agrees with the trace and with what the emulator received.
    @Test func aMixedPopulationsReceiverGetsOneTerminalEventPerMessageAndDeviceThroughA500Spell() async throws {
        let failing = NIOLockedValueBox(true)
        let answered = NIOLockedValueBox<[Int]>([])
        let receiver = try await LoopbackReceiver { _ in
            let status = failing.withLockedValue { $0 } ? 500 : 204
            answered.withLockedValue { $0.append(status) }
            return status
        }
        try await SyncTestServer.with(delivery: true, configure: Self.configure(port: receiver.port)) { server in
            let phone = try await server.device(user: "alice", device: "phone", token: Self.phoneToken)
            _ = try await server.device(user: "alice", device: "tablet", token: Self.tabletToken)
            _ = try await server.device(user: "bob", device: "bob-phone", token: Self.bobToken)
            _ = try await server.device(user: "carol", device: "carol-phone", token: Self.carolToken)
            let dave = try await server.device(user: "dave", device: "dave-phone", token: Self.daveToken, serviceExtension: true)
            try server.emulator.registerDevice(token: Self.carolToken, bundleID: "com.example.chat")
            try server.emulator.unregisterDevice(token: Self.carolToken)
            let client = try await server.connect(phone)
            _ = try await client.hello()
            // Alice's phone acknowledges what it gets, as the SDK does.
            let acks = Task {
                var acked: Int64 = 0
                while acked < 250 {
                    guard let frame = try? await client.next(timeout: .seconds(30)) else { return }
                    if frame["type"]?.string == "message", let seq = frame["seq"]?.number, Int64(seq) > acked {
                        acked = Int64(seq)
                        try await client.send(#"{"type":"ack","upTo":\#(acked)}"#)
                    }
                }
            }
            var posted: [(id: String, user: String)] = []
            for index in 0..<1_000 {
                let user = ["alice", "bob", "carol", "dave"][index % 4]
                let id = try await Self.post(server, to: user, ttl: 15)
                posted.append((id, user))
                if user == "dave" {
                    // Dave's extension fetches each message as its alert arrives.
                    let fetched = try await server.http { client in
                        try await client.get("/v1/messages/\(id)", headers: APITestFixture.headers(bearer: dave))
                    }
                    #expect(fetched.status == .ok)
                }
                if index == 400 { failing.withLockedValue { $0 = false } }  // the receiver is back
            }
            _ = await acks.result

            let devices = ["alice": ["phone", "tablet"], "bob": ["bob-phone"], "carol": ["carol-phone"], "dave": ["dave-phone"]]
            let pairs = posted.reduce(0) { $0 + devices[$1.user]!.count }
            try await server.waitUntil(timeout: .seconds(120)) {
                try Self.taken(receiver, answered: answered).filter { ["delivered", "expired"].contains($0["type"]?.stringValue) }.count >= pairs
            }
            let events = try Self.taken(receiver, answered: answered)
            #expect(answered.withLockedValue { $0.contains(500) }, "the receiver did fail for a while")

            // In order, each event once (nothing was lost to the 500s, nothing went twice).
            let ids = events.compactMap { $0["id"]?.stringValue.flatMap { Int64($0) } }
            #expect(ids == ids.sorted() && Set(ids).count == ids.count)
            var terminal: [String: [String]] = [:]
            var accepted: [String: Int] = [:]
            for (index, event) in events.enumerated() {
                let type = event["type"]?.stringValue ?? "", message = event["messageId"]?.stringValue ?? ""
                if type == "accepted" { accepted[message] = index }
                if type == "delivered" || type == "expired" {
                    terminal[message + " " + (event["deviceId"]?.stringValue ?? ""), default: []].append(type)
                    #expect(accepted[message].map { $0 < index } == true, "accepted comes first")
                }
            }
            let expected = ["phone": "delivered", "tablet": "expired", "bob-phone": "expired", "carol-phone": "expired",
                            "dave-phone": "delivered"]
            for (id, user) in posted {
                for device in devices[user]! {
                    #expect(terminal[id + " " + device] == [expected[device]!], "\(id) on \(device)")
                }
            }
            #expect(events.contains { $0["type"]?.stringValue == "token-dead" && $0["deviceId"]?.stringValue == "carol-phone" })
            #expect(events.contains { $0["type"]?.stringValue == "shown" && $0["deviceId"]?.stringValue == "dave-phone" })

            // Each sampled trace says what the events said, and its pushes are the emulator's.
            for (id, user) in posted.enumerated().filter({ $0.offset % 50 == 0 }).map(\.element) {
                let (_, trace) = try await TraceEndToEndTests.trace(server, id, bearer: server.chatKey)
                for device in devices[user]! {
                    let traced = TraceEndToEndTests.events(trace, device: device)
                    let types = Set(TraceEndToEndTests.types(traced))
                    #expect(types.contains(expected[device] == "delivered" ? "synced" : "expired"), "\(id) on \(device): \(types)")
                    let pushedIDs = Set(events.filter {
                        $0["type"]?.stringValue == "pushed" && $0["messageId"]?.stringValue == id && $0["deviceId"]?.stringValue == device
                    }.compactMap { $0["apnsId"]?.stringValue })
                    let tracedSent = Set(traced.filter { $0["type"]?.stringValue == "push" }.compactMap { $0["apnsId"]?.stringValue })
                    #expect(pushedIDs.isSubset(of: tracedSent), "\(id) on \(device)")
                    let token = [
                        "phone": Self.phoneToken, "tablet": Self.tabletToken, "bob-phone": Self.bobToken,
                        "carol-phone": Self.carolToken, "dave-phone": Self.daveToken,
                    ][device]!
                    let emulated = Set(server.emulator.deliveries(to: token).map { $0.apnsID.lowercased() })
                    #expect(pushedIDs.isSubset(of: emulated), "every pushed event is a push the emulator took")
                }
            }

            // The webhook's own view: nothing behind, the failures in the attempt log.
            let status = try await server.http { client in
                try await client.get("/v1/webhook", headers: APITestFixture.headers(bearer: server.chatKey))
            }
            #expect(status.status == .ok)
            let attempts = try await server.store.webhookAttempts(appID: "chat", limit: 1_000)
            #expect(attempts.contains { $0.status == 500 } && attempts.contains(where: \.succeeded))
        }
        try await receiver.close()
    }
}

/// The webhook's API and the event stream.
@Suite struct WebhookAPITests {
    static func get(_ server: SyncTestServer, _ path: String, key: String? = nil) async throws -> (HTTPResponse.Status, JSONValue?) {
        let response = try await server.http { client in
            try await client.get(path, headers: APITestFixture.headers(bearer: key ?? server.chatKey))
        }
        return (response.status, response.body.flatMap { try? JSONParser.parse(Array($0.readableBytesView)) })
    }

    static func replay(_ server: SyncTestServer, _ body: String) async throws -> (HTTPResponse.Status, JSONValue?) {
        let response = try await server.http { client in
            try await client.post("/v1/webhook/replay", headers: APITestFixture.headers(bearer: server.chatKey), body: ByteBuffer(string: body))
        }
        return (response.status, response.body.flatMap { try? JSONParser.parse(Array($0.readableBytesView)) })
    }

    @Test func theStatusTheAttemptsAndAReplayThatSendsEventsAgainInOrder() async throws {
        let receiver = try await LoopbackReceiver()
        try await SyncTestServer.with(delivery: true, configure: WebhooksEndToEndTests.configure(port: receiver.port)) { server in
            _ = try await server.device(user: "alice", device: "phone")
            let first = try await server.post(to: ["alice"])
            let second = try await server.post(to: ["alice"])
            func accepted() -> [String] {
                receiver.received.flatMap { (try? JSONParser.parse($0.body))?["events"]?.arrayValue ?? [] }
                    .filter { $0["type"]?.stringValue == "accepted" }.compactMap { $0["messageId"]?.stringValue }
            }
            try await server.waitUntil { accepted().count == 2 }
            #expect(accepted() == [first, second])
            // The cursor moves once the receiver's answer is back.
            try await server.waitUntil { try await server.store.eventLogStatus(appID: "chat", now: Date())?.behind == 0 }

            let (status, body) = try await Self.get(server, "/v1/webhook")
            #expect(status == .ok)
            #expect(body?["url"]?.stringValue == "http://127.0.0.1:\(receiver.port)/hooks")
            #expect(body?["behind"]?.intValue == 0 && body?["dropped"]?.intValue == 0 && body?["sender"]?.stringValue == "local")
            #expect(body?["lastAttempt"]?["status"]?.intValue == 204)
            let (_, attempts) = try await Self.get(server, "/v1/webhook/attempts?limit=10")
            #expect(attempts?["attempts"]?.arrayValue?.isEmpty == false)
            let page = try await server.http { client in
                try await client.get("/status", headers: APITestFixture.headers(bearer: APITestFixture.adminToken))
            }
            let html = page.body.map { String(buffer: $0) } ?? ""
            #expect(html.contains(#"id="webhook-chat""#) && html.contains("0 events") && html.contains("none waiting"))
            #expect(!html.contains(#"id="webhook-mail""#), "mail has no webhook")

            // From the first message's event on: both go again, in order.
            let firstEvent = receiver.received.flatMap { (try? JSONParser.parse($0.body))?["events"]?.arrayValue ?? [] }
                .first { $0["messageId"]?.stringValue == first }?["id"]?.stringValue
            let (replayed, _) = try await Self.replay(server, #"{"fromEventId":"\#(firstEvent ?? "")"}"#)
            #expect(replayed == .ok)
            try await server.waitUntil { accepted().count == 4 }
            #expect(accepted() == [first, second, first, second])

            #expect(try await Self.replay(server, #"{"fromEventId":"999999"}"#).0 == .notFound)
            #expect(try await Self.replay(server, #"{"since":"yesterday"}"#).0 == .badRequest)
            #expect(try await Self.replay(server, #"{}"#).0 == .badRequest)
            #expect(try await Self.replay(server, #"{"since":"2020-01-01T00:00:00Z"}"#).0 == .ok)
            try await server.waitUntil { accepted().count == 6 }
            #expect(try await Self.get(server, "/v1/webhook/attempts?limit=0").0 == .badRequest)
            let mailKey = try await server.store.createAPIKey(appID: "mail", name: "test").secret
            #expect(try await Self.get(server, "/v1/webhook", key: mailKey).0 == .notFound, "mail has no webhook")
        }
        try await receiver.close()
    }

    /// `curl -N` on `/v1/events`: the stream starts at the newest, each event with its id, and a
    /// client that comes back with `Last-Event-ID` goes on after it.
    @Test func theEventStreamTellsNewEventsAndResumesAfterTheLastOneSeen() async throws {
        let receiver = try await LoopbackReceiver()
        try await SyncTestServer.with(delivery: true, configure: WebhooksEndToEndTests.configure(port: receiver.port)) { server in
            _ = try await server.device(user: "alice", device: "phone")
            let before = try await server.post(to: ["alice"])
            try await server.waitUntil { !receiver.received.isEmpty }
            let stream = try await SyncRawClient.open(port: server.port)
            func request(_ extra: String = "") -> ByteBuffer {
                ByteBuffer(string: "GET /v1/events HTTP/1.1\r\nHost: test\r\nAuthorization: Bearer \(server.chatKey)\r\n\(extra)\r\n")
            }
            try await stream.channel.writeAndFlush(request()).get()
            let head = try await stream.waitFor("retry: 2000")
            #expect(head.contains("200 OK") && head.lowercased().contains("content-type: text/event-stream"))
            let id = try await server.post(to: ["alice"])
            let received = try await stream.waitFor(id)
            #expect(!received.contains(before), "from the newest on")
            #expect(received.contains("event: accepted"))
            let lastID = try #require(received.range(of: "id: ", options: .backwards)).upperBound
            let lastEventID = received[lastID...].prefix { $0.isNumber }
            try await stream.close()

            let third = try await server.post(to: ["alice"])
            let resumed = try await SyncRawClient.open(port: server.port)
            try await resumed.channel.writeAndFlush(request("Last-Event-ID: \(lastEventID)\r\n")).get()
            let again = try await resumed.waitFor(third)
            #expect(!again.contains(id), "after the last event seen")
            try await resumed.close()

            let gone = try await SyncRawClient.open(port: server.port)
            try await gone.channel.writeAndFlush(request("Last-Event-ID: 987654\r\n")).get()
            #expect(try await gone.waitFor("\r\n\r\n").contains("404"))
            try await gone.close()
        }
        try await receiver.close()
    }

    @Test func streamsBeyondTheNodesLimitAreRefused() async throws {
        let receiver = try await LoopbackReceiver()
        try await SyncTestServer.with(delivery: true, configure: {
            WebhooksEndToEndTests.configure(port: receiver.port)(&$0)
            $0.limits.eventStreams = 1
        }) { server in
            let request = ByteBuffer(string: "GET /v1/events HTTP/1.1\r\nHost: test\r\nAuthorization: Bearer \(server.chatKey)\r\n\r\n")
            let open = try await SyncRawClient.open(port: server.port)
            try await open.channel.writeAndFlush(request).get()
            _ = try await open.waitFor("retry: 2000")
            let refused = try await SyncRawClient.open(port: server.port)
            try await refused.channel.writeAndFlush(request).get()
            let answer = try await refused.waitFor("\r\n\r\n")
            #expect(answer.contains("503"), "\(answer)")
            try await refused.close()
            try await open.close()
        }
        try await receiver.close()
    }
}
