import BeckonJSON
@testable import BeckonServer
import BeckonStore
import Foundation
import Hummingbird
import HummingbirdTesting
import HummingbirdWSClient
import Testing

/// `GET /v1/sync` end to end: a real listener, real WebSocket clients, SQLite on a temp file.
@Suite struct SyncGatewayTests {
    @Test func postedMessagesArriveLiveAndResumeFromTheCursor() async throws {
        try await SyncTestServer.with { server in
            let credential = try await server.device(user: "alice", device: "phone")
            let client = try await server.connect(credential)
            let welcome = try await client.hello(cursor: 0)
            #expect(welcome["version"]?.number == 2)
            #expect(welcome["badge"]?.number == 0)
            #expect(welcome["lastSequence"]?.number == 0)
            #expect(welcome["window"]?.number == 100)
            #expect(welcome["sessionId"]?.string != nil)

            let id = try await server.post(to: ["alice"], text: "live")
            let message = try await client.next()
            #expect(message["type"]?.string == "message")
            #expect(message["seq"]?.number == 1)
            #expect(message["id"]?.string == id)
            #expect(message["kind"]?.string == "message")
            #expect(message["payload"]?["text"]?.string == "live")
            #expect(message["createdAt"]?.number != nil)

            try await client.send(#"{"type":"ack","upTo":1}"#)
            try await client.send(#"{"type":"bye"}"#)
            #expect(try await client.closeCode() == 1000)
            #expect(try await server.store.cursor(device: DeviceRef(appID: "chat", deviceID: "phone")) == 1)

            // Two more while away; a reconnect with cursor 1 gets only those, in order.
            try await server.post(to: ["alice"], text: "two")
            try await server.post(to: ["alice"], text: "three")
            let again = try await server.connect(credential)
            let rewelcome = try await again.hello(cursor: 1)
            #expect(rewelcome["lastSequence"]?.number == 3)
            #expect(rewelcome["badge"]?.number == 3, "the unread count: nothing was read yet")
            #expect(try await again.messages(2) == [2, 3])
            try await again.roundTrip()
            try await again.send(#"{"type":"bye"}"#)
            #expect(try await again.closeCode() == 1000)
        }
    }

    @Test func missedMessagesComeInOrderThenLiveOnes() async throws {
        try await SyncTestServer.with { server in
            let credential = try await server.device(user: "alice", device: "phone")
            for n in 1...5 { try await server.post(to: ["alice", "bob"], text: "m\(n)") }
            let client = try await server.connect(credential)
            #expect(try await client.hello(cursor: 0)["lastSequence"]?.number == 5)
            #expect(try await client.messages(5) == [1, 2, 3, 4, 5])
            try await server.post(to: ["bob"])  // not alice's
            try await server.post(to: ["alice"])
            #expect(try await client.messages(1) == [6])
            try await client.send(#"{"type":"bye"}"#)
            _ = try await client.closeCode()
        }
    }

    /// Live messages are handed to the session with their wake-up (no read of the store) when
    /// they follow what it sent; concurrent posts announce them out of order, and a burst
    /// overflows what a queued wake-up carries: either way each arrives once, in order.
    @Test func concurrentPostsArriveOnceEachInOrder() async throws {
        try await SyncTestServer.with { server in
            let credential = try await server.device(user: "alice", device: "phone")
            let client = try await server.connect(credential)
            _ = try await client.hello(cursor: 0)
            try await server.post(to: ["alice"], text: "first")
            #expect(try await client.messages(1) == [1])
            try await withThrowingTaskGroup(of: Void.self) { group in
                for n in 2...41 { group.addTask { try await server.post(to: ["alice"], text: "m\(n)") } }
                try await group.waitForAll()
            }
            #expect(try await client.messages(40) == Array(2...41))
            // Nothing twice: the next frame is the pong.
            try await client.roundTrip("after")
            try await client.send(#"{"type":"bye"}"#)
            _ = try await client.closeCode()
        }
    }

    @Test func theWindowBoundsMessagesInFlight() async throws {
        try await SyncTestServer.with { server in
            let credential = try await server.device(user: "alice", device: "phone")
            for n in 1...5 { try await server.post(to: ["alice"], text: "m\(n)") }
            let client = try await server.connect(credential)
            #expect(try await client.hello(cursor: 0, window: 2)["window"]?.number == 2)
            #expect(try await client.messages(2) == [1, 2])
            // The server answers frames in order: had it sent a third message, it would come
            // before this pong.
            try await client.roundTrip("full")
            try await server.post(to: ["alice"])  // a wake-up with the window full sends nothing
            try await client.roundTrip("still-full")
            try await client.send(#"{"type":"ack","upTo":1}"#)
            #expect(try await client.messages(1) == [3])
            try await client.roundTrip("one-more")
            try await client.send(#"{"type":"ack","upTo":3}"#)
            #expect(try await client.messages(2) == [4, 5])
            try await client.send(#"{"type":"ack","upTo":5}"#)
            #expect(try await client.messages(1) == [6])
            try await client.send(#"{"type":"bye"}"#)
            _ = try await client.closeCode()
        }
    }

    @Test func theServerCapsTheWindow() async throws {
        try await SyncTestServer.with(maxWindow: 3) { server in
            let credential = try await server.device(user: "alice", device: "phone")
            let client = try await server.connect(credential)
            #expect(try await client.hello(cursor: 0, window: 50)["window"]?.number == 3)
            try await client.send(#"{"type":"bye"}"#)
            _ = try await client.closeCode()
        }
    }

    @Test func aResumingDeviceLearnsWhatWasReadWhileItWasAway() async throws {
        try await SyncTestServer.with { server in
            let phone = try await server.device(user: "alice", device: "phone")
            let tablet = try await server.device(user: "alice", device: "tablet")
            let first = try await server.post(to: ["alice"], text: "one")
            try await server.post(to: ["alice"], text: "two")
            // The phone reads the first while the tablet is offline.
            let a = try await server.connect(phone)
            _ = try await a.hello(cursor: 0)
            #expect(try await a.messages(2) == [1, 2])
            try await a.send(#"{"type":"read","ids":["\#(first)"]}"#)
            try await a.roundTrip()

            let b = try await server.connect(tablet)
            let welcome = try await b.hello(cursor: 0)
            #expect(welcome["badge"]?.number == 1, "one unread left")
            let one = try await b.next(), two = try await b.next()
            #expect(one["id"]?.string == first)
            #expect(one["read"] == JSONValue.bool(true), "read on the phone: the tablet must not notify it")
            #expect(two["read"] == JSONValue.bool(false))
            for client in [a, b] {
                try await client.send(#"{"type":"bye"}"#)
                _ = try await client.closeCode()
            }
        }
    }

    @Test func aDeviceThatAlreadyHadTheMessagesIsToldWhichWereReadAfterWelcome() async throws {
        try await SyncTestServer.with { server in
            let phone = try await server.device(user: "alice", device: "phone")
            let tablet = try await server.device(user: "alice", device: "tablet")
            let first = try await server.post(to: ["alice"], text: "one")
            try await server.post(to: ["alice"], text: "two")
            // The tablet stores both (and may show their notifications), then goes away.
            let away = try await server.connect(tablet)
            _ = try await away.hello(cursor: 0)
            #expect(try await away.messages(2) == [1, 2])
            try await away.send(#"{"type":"ack","upTo":2}"#)
            try await away.send(#"{"type":"bye"}"#)
            _ = try await away.closeCode()
            // Meanwhile the phone reads the first.
            let a = try await server.connect(phone)
            _ = try await a.hello(cursor: 0)
            _ = try await a.messages(2)
            try await a.send(#"{"type":"read","ids":["\#(first)"]}"#)
            try await a.roundTrip()
            // The tablet resumes at its cursor: nothing new to send, but it must learn the read.
            let back = try await server.connect(tablet)
            let welcome = try await back.hello(cursor: 2)
            #expect(welcome["badge"]?.number == 1)
            let told = try await back.next()
            #expect(told["type"]?.string == "readElsewhere")
            #expect(told["ids"] == .array([.string(first)]))
            #expect(told["badge"]?.number == 1)
            for client in [a, back] {
                try await client.send(#"{"type":"bye"}"#)
                _ = try await client.closeCode()
            }
        }
    }

    @Test func readOnOneDeviceIsReadElsewhereOnTheOthers() async throws {
        try await SyncTestServer.with { server in
            let phone = try await server.device(user: "alice", device: "phone")
            let tablet = try await server.device(user: "alice", device: "tablet")
            let first = try await server.post(to: ["alice"], text: "one")
            try await server.post(to: ["alice"], text: "two")
            let a = try await server.connect(phone)
            let b = try await server.connect(tablet)
            _ = try await a.hello(cursor: 0)
            _ = try await b.hello(cursor: 0)
            #expect(try await a.messages(2) == [1, 2])
            #expect(try await b.messages(2) == [1, 2])

            try await a.send(#"{"type":"read","ids":["\#(first)"]}"#)
            let event = try await b.next()
            #expect(event["type"]?.string == "readElsewhere")
            #expect(event["ids"] == .array([.string(first)]))
            #expect(event["badge"]?.number == 1)
            // Not to the device that read; and reading it again tells nobody.
            try await a.roundTrip()
            try await a.send(#"{"type":"read","ids":["\#(first)"]}"#)
            try await b.roundTrip()
            for client in [a, b] {
                try await client.send(#"{"type":"bye"}"#)
                _ = try await client.closeCode()
            }
        }
    }

    @Test func aSecondSessionReplacesTheFirst() async throws {
        try await SyncTestServer.with { server in
            let credential = try await server.device(user: "alice", device: "phone")
            let old = try await server.connect(credential)
            _ = try await old.hello(cursor: 0)
            // A session counts from its hello (its role decides whom it replaces).
            let new = try await server.connect(credential)
            _ = try await new.hello(cursor: 0)
            #expect(try await old.closeCode() == 4001)
            try await server.post(to: ["alice"])
            #expect(try await new.messages(1) == [1])
            let presence = try await server.waitForPresence("phone") { $0.isConnected && $0.lastEnd == .replaced }
            #expect(presence.connectedSince != nil)
            try await new.send(#"{"type":"bye"}"#)
            _ = try await new.closeCode()
        }
    }

    @Test func theAppPreemptsItsExtensionAndAnExtensionNeverEvictsTheApp() async throws {
        try await SyncTestServer.with { server in
            let credential = try await server.device(user: "alice", device: "phone")
            try await server.post(to: ["alice"])
            // The notification service extension syncs in the background...
            let serviceExtension = try await server.connect(credential)
            _ = try await serviceExtension.hello(cursor: 0, role: "extension")
            #expect(try await serviceExtension.messages(1) == [1])
            // ...the user opens the app: the app's session takes over, the extension gets 4002.
            let app = try await server.connect(credential)
            _ = try await app.hello(cursor: 0)
            #expect(try await serviceExtension.closeCode() == 4002)
            #expect(try await app.messages(1) == [1])

            // An extension arriving while the app is live is refused with 4002, before any read.
            let late = try await server.connect(credential)
            try await late.send(#"{"type":"hello","version":2,"role":"extension","cursor":0}"#)
            #expect(try await late.closeCode() == 4002)
            try await app.roundTrip()  // The app's session is untouched.
            #expect(await server.hub.sessionCount == 1)
            let presence = try #require(await server.presence("phone"))
            #expect(presence.isConnected, "the device stayed connected through the handover")
            try await app.send(#"{"type":"bye"}"#)
            _ = try await app.closeCode()
        }
    }

    @Test func aSecondExtensionReplacesTheFirst() async throws {
        try await SyncTestServer.with { server in
            let credential = try await server.device(user: "alice", device: "phone")
            let first = try await server.connect(credential)
            _ = try await first.hello(cursor: 0, role: "extension")
            let second = try await server.connect(credential)
            _ = try await second.hello(cursor: 0, role: "extension")
            #expect(try await first.closeCode() == 4001)
            try await second.send(#"{"type":"bye"}"#)
            _ = try await second.closeCode()
        }
    }

    @Test func badCredentialsAreRefusedBeforeTheUpgrade() async throws {
        try await SyncTestServer.with { server in
            _ = try await server.device(user: "alice", device: "phone")
            for credential in [nil, "bkd_wrong", "bk_not-a-device-credential"] as [String?] {
                await #expect(throws: WebSocketClientError.webSocketUpgradeFailed) {
                    _ = try await server.connect(credential)
                }
            }
            // The same request without the upgrade shows the answer: 401 with an error body.
            let response = try await server.http { client in
                try await client.get("/v1/sync", headers: APITestFixture.headers(bearer: "bkd_wrong", contentType: nil))
            }
            #expect(response.status == .unauthorized)
            let body = try JSONParser.parse(Array(try #require(response.body).readableBytesView))
            #expect(body["error"]?["code"]?.string == "unauthorized")
        }
    }

    @Test func deletingTheDeviceClosesItsSessionWith4003() async throws {
        try await SyncTestServer.with { server in
            let credential = try await server.device(user: "alice", device: "phone")
            let client = try await server.connect(credential)
            _ = try await client.hello(cursor: 0)
            let response = try await server.http { http in
                try await http.delete(
                    "/v1/devices/phone", headers: APITestFixture.headers(bearer: server.chatKey, contentType: nil),
                    body: ByteBuffer())
            }
            #expect(response.status == .noContent)
            #expect(try await client.closeCode() == 4003)
        }
    }

    @Test func protocolErrorsClose4008AfterAnErrorFrame() async throws {
        try await SyncTestServer.with { server in
            let credential = try await server.device(user: "alice", device: "phone")
            let early = try await server.connect(credential)
            try await early.send(#"{"type":"ack","upTo":0}"#)
            let error = try await early.next()
            #expect(error["type"]?.string == "error")
            #expect(error["code"]?.string == "unexpected_frame")
            #expect(try await early.closeCode() == 4008)

            let unknown = try await server.connect(credential)
            _ = try await unknown.hello(cursor: 0)
            try await unknown.send(#"{"type":"subscribe"}"#)
            #expect(try await unknown.next()["code"]?.string == "unknown_type")
            #expect(try await unknown.closeCode() == 4008)
            _ = try await server.waitForPresence("phone") { $0.lastEnd == .protocolError && !$0.isConnected }
        }
    }

    @Test func presenceTellsCleanFromDropped() async throws {
        try await SyncTestServer.with { server in
            let credential = try await server.device(user: "alice", device: "phone")
            #expect(await server.presence("phone") == nil)
            try await server.post(to: ["alice"])
            let clean = try await server.connect(credential)
            _ = try await clean.hello(cursor: 0)
            #expect(try await clean.messages(1) == [1])
            try await clean.send(#"{"type":"ack","upTo":1}"#)
            let connected = try await server.waitForPresence("phone") { $0.isConnected && $0.lastAck == 1 }
            #expect(connected.lastEnd == nil)
            try await clean.send(#"{"type":"bye"}"#)
            #expect(try await clean.closeCode() == 1000)
            let afterBye = try await server.waitForPresence("phone") { !$0.isConnected }
            #expect(afterBye.lastEnd == .clean)
            #expect(afterBye.lastAck == 1)

            // Ending without bye (here a bare close frame) is a drop.
            let dropped = try await server.connect(credential)
            _ = try await dropped.hello(cursor: 1)
            try await dropped.closeWithoutBye()
            _ = try? await dropped.closeCode()
            let afterDrop = try await server.waitForPresence("phone") { !$0.isConnected && $0.lastEnd != .clean }
            #expect(afterDrop.lastEnd == .dropped)
        }
    }

    @Test func shutdownClosesSessionsWith1001() async throws {
        try await SyncTestServer.with { server in
            let credential = try await server.device(user: "alice", device: "phone")
            let client = try await server.connect(credential)
            _ = try await client.hello(cursor: 0)
            await server.group.triggerGracefulShutdown()
            #expect(try await client.closeCode() == 1001)
            #expect(await server.presence("phone")?.lastEnd == .shutdown)
        }
    }
}
