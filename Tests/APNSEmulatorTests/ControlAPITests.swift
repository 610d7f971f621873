import APNSCore
import EmulatorTestSupport
import Foundation
import Testing

@testable import APNSEmulator

/// Starts an emulator with its control API and hands the test a client for it.
func withControl(
    configure: (inout APNSEmulatorConfiguration) -> Void = { _ in },
    _ body: (APNSEmulator, TestKey, ControlClient) async throws -> Void
) async throws {
    try await withEmulator(configure: configure) { emulator, key in
        let server = try await emulator.startControl(host: "127.0.0.1", port: 0)
        try await body(emulator, key, ControlClient(port: server.port))
    }
}

@Suite("Control API over HTTP/1.1")
struct ControlAPITests {
    @Test("Devices: create, list, detail, online/offline, unregister → 410 with timestamp")
    func devices() async throws {
        try await withControl { emulator, key, control in
            let health = try await control.get("/health")
            #expect(health.status == 200)
            #expect(health.json["environment"] as? String == "sandbox")
            #expect(health.headers["content-type"] == "application/json")

            let created = try await control.post(
                "/devices", #"{"token":"\#(tokenA.uppercased())","bundleId":"com.example.app","kind":"app","environment":"sandbox","online":false}"#
            )
            #expect(created.status == 201)
            #expect(created.json["token"] as? String == tokenA)
            #expect(created.json["online"] as? Bool == false)
            let voip = try await control.post("/devices", #"{"bundleId":"com.example.app","kind":"voip"}"#)
            #expect(voip.status == 201)
            let voipToken = try #require(voip.json["token"] as? String)
            #expect(emulator.device(token: voipToken)?.kind == .voip)

            let list = try await control.get("/devices")
            #expect((list.json["devices"] as? [[String: Any]])?.count == 2)

            #expect(try await control.post("/devices/\(tokenA)/online", "").json["online"] as? Bool == true)
            #expect(emulator.device(token: tokenA)?.isOnline == true)
            #expect(try await control.post("/devices/\(tokenA)/offline").json["online"] as? Bool == false)
            #expect(emulator.device(token: tokenA)?.isOnline == false)

            let unregistered = try await control.delete("/devices/\(tokenA)")
            #expect(unregistered.status == 200)
            let gone = try #require(unregistered.json["unregisteredAt"] as? Int64)
            let client = try await TestClient.connect(to: emulator)
            defer { Task { await client.close() } }
            let response = try await client.send(.push(token: tokenA, jwt: key.token()))
            #expect(response.status == 410)
            #expect(response.reason == "Unregistered")
            #expect((response.json["timestamp"] as? NSNumber)?.int64Value == gone)

            // The other spelling of the same thing.
            #expect(try await control.post("/devices/\(voipToken)/unregister").json["unregisteredAt"] != nil)
        }
    }

    @Test("Received, displayed and stored notifications, as JSON, in order")
    func deliveries() async throws {
        try await withControl { emulator, key, control in
            _ = try await control.post("/devices", #"{"token":"\#(tokenA)","bundleId":"com.example.app"}"#)
            _ = try await control.post("/devices", #"{"token":"\#(tokenB)","bundleId":"com.example.app","online":false}"#)
            let client = try await TestClient.connect(to: emulator)
            defer { Task { await client.close() } }
            let jwt = key.token()
            for text in ["one", "two"] {
                let request = TestRequest.push(
                    token: tokenA, jwt: jwt, extra: [("apns-collapse-id", "c"), ("apns-expiration", "0")],
                    body: #"{"aps":{"alert":"\#(text)"},"id":7}"#
                )
                #expect(try await client.send(request).status == 200)
            }
            #expect(try await client.send(.push(token: tokenB, jwt: jwt, body: #"{"aps":{"alert":"held"}}"#)).status == 200)

            let received = try #require(try await control.get("/devices/\(tokenA)/received").json["notifications"] as? [[String: Any]])
            #expect(received.count == 2)
            let first = received[0]
            #expect(((first["payload"] as? [String: Any])?["aps"] as? [String: Any])?["alert"] as? String == "one")
            #expect(((received[1]["payload"] as? [String: Any])?["aps"] as? [String: Any])?["alert"] as? String == "two")
            #expect(first["collapseId"] as? String == "c")
            #expect(first["pushType"] as? String == "alert")
            #expect(first["priority"] as? Int == 10)
            #expect(first["expiration"] as? Int == 0)
            #expect(first["topic"] as? String == "com.example.app")
            let headers = try #require(first["headers"] as? [String: String])
            #expect(headers["apns-collapse-id"] == "c")
            #expect(headers["apns-push-type"] == "alert")
            #expect(headers["authorization"] == nil)
            #expect(first["apnsId"] as? String == emulator.deliveries(to: tokenA)[0].apnsID)

            let displayed = try #require(try await control.get("/devices/\(tokenA)/displayed").json["notifications"] as? [[String: Any]])
            #expect(displayed.count == 1)  // The collapse id replaced the first (apns.md E.2).

            let stored = try await control.get("/devices/\(tokenB)/stored")
            #expect(((stored.json["notification"] as? [String: Any])?["payload"] as? [String: Any]) != nil)
            #expect((try await control.get("/devices/\(tokenB)/received").json["notifications"] as? [Any])?.isEmpty == true)
            _ = try await control.post("/devices/\(tokenB)/online")
            #expect((try await control.get("/devices/\(tokenB)/received").json["notifications"] as? [Any])?.count == 1)
            #expect(try await control.get("/devices/\(tokenB)/stored").json["notification"] is NSNull)
        }
    }

    @Test("Errors are JSON with a code: 400, 404, 405")
    func errors() async throws {
        try await withControl { _, _, control in
            let cases: [(ControlReply, Int, String)] = [
                (try await control.post("/devices", #"{"token":"xyz","bundleId":"a"}"#), 400, "invalid-token"),
                (try await control.post("/devices", #"{"token":"\#(tokenA)"}"#), 400, "bad-request"),
                (try await control.post("/devices", #"{"bundleId":"a","kind":"watch"}"#), 400, "bad-request"),
                (try await control.post("/devices", #"{"bundleId":"a","online":"yes"}"#), 400, "bad-request"),
                (try await control.post("/devices", "{nope"), 400, "invalid-json"),
                (try await control.post("/devices", "[1]"), 400, "invalid-json"),
                (try await control.get("/devices/\(tokenB)"), 404, "unknown-device"),
                (try await control.get("/devices/\(tokenB)/received"), 404, "unknown-device"),
                (try await control.post("/devices/\(tokenB)/online"), 404, "unknown-device"),
                (try await control.delete("/devices/\(tokenB)"), 404, "unknown-device"),
                (try await control.get("/nowhere"), 404, "not-found"),
                (try await control.get("/devices/\(tokenB)/elsewhere"), 404, "not-found"),
                (try await control.request("PUT", "/faults"), 405, "method-not-allowed"),
                (try await control.post("/faults", #"{"type":"respond","reason":"NotAReason"}"#), 400, "unknown-reason"),
                (try await control.post("/faults", #"{"type":"respond"}"#), 400, "bad-request"),
                (try await control.post("/faults", #"{"type":"sparkles"}"#), 400, "unknown-fault"),
                (try await control.post("/faults", #"{"type":"too-many-requests"}"#), 400, "bad-request"),
                (try await control.post("/faults", #"{"type":"never-respond","count":0}"#), 400, "bad-request"),
                (try await control.post("/faults", #"{"type":"delay","milliseconds":1.5}"#), 400, "bad-request"),
                (try await control.post("/faults", #"{"type":"random-failures","internalServerErrorRate":2}"#), 400, "bad-request"),
                (try await control.post("/faults", #"{"type":"respond","reason":"BadTopic","deviceToken":"12"}"#), 400, "invalid-token"),
            ]
            for (reply, status, code) in cases {
                #expect(reply.status == status, "\(reply.json)")
                #expect(reply.errorCode == code, "\(reply.json)")
                #expect(((reply.json["error"] as? [String: Any])?["message"] as? String)?.isEmpty == false)
            }
        }
    }

    @Test("Faults by request: respond, 429 for a token, 500/503 rates, never respond; cleared by DELETE")
    func answerFaults() async throws {
        try await withControl { emulator, key, control in
            let client = try await TestClient.connect(to: emulator)
            defer { Task { await client.close() } }
            let jwt = key.token()

            #expect(try await control.post("/faults", #"{"type":"respond","reason":"BadDeviceToken","count":1}"#).status == 201)
            #expect(try await client.send(.push(token: tokenA, jwt: jwt)).reason == "BadDeviceToken")
            #expect(try await client.send(.push(token: tokenA, jwt: jwt)).status == 200)

            _ = try await control.post("/faults", #"{"type":"too-many-requests","deviceToken":"\#(tokenB)"}"#)
            #expect(try await client.send(.push(token: tokenB, jwt: jwt)).status == 429)
            #expect(try await client.send(.push(token: tokenA, jwt: jwt)).status == 200)
            let faults = try await control.get("/faults")
            let rules = try #require(faults.json["rules"] as? [[String: Any]])
            #expect(rules.count == 1)
            #expect(rules[0]["reason"] as? String == "TooManyRequests")
            #expect(rules[0]["deviceToken"] as? String == tokenB)
            #expect((try await control.delete("/faults").json["rules"] as? [Any])?.isEmpty == true)
            #expect(try await client.send(.push(token: tokenB, jwt: jwt)).status == 200)

            _ = try await control.post("/faults", #"{"type":"random-failures","internalServerErrorRate":1}"#)
            #expect(try await client.send(.push(token: tokenA, jwt: jwt)).reason == "InternalServerError")
            _ = try await control.post("/faults", #"{"type":"random-failures","serviceUnavailableRate":1.0}"#)
            #expect(try await client.send(.push(token: tokenA, jwt: jwt)).reason == "ServiceUnavailable")
            _ = try await control.delete("/faults")

            _ = try await control.post("/faults", #"{"type":"delay","milliseconds":10,"deviceToken":"\#(tokenA)","count":1}"#)
            _ = try await control.post("/faults", #"{"type":"response-delay","milliseconds":5}"#)
            #expect(try await control.get("/faults").json["responseDelayMilliseconds"] as? Int == 5)
            #expect(try await client.send(.push(token: tokenA, jwt: jwt)).status == 200)
            _ = try await control.post("/faults", #"{"type":"response-delay","milliseconds":null}"#)

            _ = try await control.post("/faults", #"{"type":"never-respond","deviceToken":"\#(tokenB)","count":1}"#)
            let silent = try await client.start(.push(token: tokenB, jwt: jwt))
            #expect(try await client.send(.push(token: tokenA, jwt: jwt)).status == 200)
            let counters = try await control.get("/counters").json
            #expect(counters["unanswered"] as? Int == 1)
            #expect((counters["byStatus"] as? [String: Int])?["429"] == 1)
            #expect((counters["byStatus"] as? [String: Int])?["500"] == 1)
            #expect((counters["byReason"] as? [String: Int])?["BadDeviceToken"] == 1)
            #expect((counters["byReason"] as? [String: Int])?["ServiceUnavailable"] == 1)
            #expect(counters["requests"] as? Int == emulator.counters.requests)
            await client.close()
            #expect(try await silent.get().end == .closed)

            let reset = try await control.post("/reset")
            #expect(reset.json["requests"] as? Int == 0)
            #expect(emulator.counters == APNSEmulatorCounters())
        }
    }

    @Test("Connection faults by request: GOAWAY after N, reset after N, stream limits, throttle, wedge")
    func connectionFaults() async throws {
        try await withControl { emulator, key, control in
            let jwt = key.token()
            _ = try await control.post("/faults", #"{"type":"goaway-after-streams","streams":1,"reason":"ServiceUnavailable"}"#)
            let first = try await TestClient.connect(to: emulator)
            #expect(try await first.send(.push(token: tokenA, jwt: jwt)).status == 200)
            try await first.waitFor("GOAWAY") { $0.goAway != nil }
            #expect(try await first.goAway?.debug == #"{"reason":"ServiceUnavailable"}"#)
            _ = try await control.post("/faults", #"{"type":"goaway-after-streams","streams":null}"#)

            _ = try await control.post("/faults", #"{"type":"reset-after-streams","streams":0}"#)
            let second = try await TestClient.connect(to: emulator)
            #expect(try await second.send(.push(token: tokenA, jwt: jwt)).end == .closed)
            _ = try await control.delete("/faults")

            _ = try await control.post("/faults", #"{"type":"throttle-on-reject"}"#)
            _ = try await control.post("/faults", #"{"type":"max-concurrent-streams","limit":20}"#)
            let third = try await TestClient.connect(to: emulator)
            defer { Task { await third.close() } }
            #expect(try await third.send(.push(token: tokenA, jwt: jwt)).status == 200)
            #expect(try await third.send(.push(token: tokenA, jwt: jwt, body: "")).reason == "PayloadEmpty")
            #expect(try await third.send(.push(token: tokenA, jwt: jwt)).status == 200)
            #expect(try await third.maxConcurrentStreamsReceived == [1, 20, 1, 20])
            #expect(try await control.get("/faults").json["maxConcurrentStreams"] as? Int == 20)

            _ = try await control.post("/faults", #"{"type":"wedge-on-expired-token","enabled":true}"#)
            #expect(try await control.get("/faults").json["wedgeOnExpiredToken"] as? Bool == true)
            let stale = key.token(issuedAt: Date().addingTimeInterval(-4000))
            #expect(try await third.send(.push(token: tokenA, jwt: stale)).reason == "ExpiredProviderToken")
            #expect(try await third.send(.push(token: tokenA, jwt: jwt)).reason == "ExpiredProviderToken")

            let fourth = try await TestClient.connect(to: emulator)
            #expect(try await fourth.send(.push(token: tokenA, jwt: jwt)).status == 200)
            #expect(try await control.get("/connections").json["live"] as? Int ?? 0 >= 1)
            _ = try await control.post("/connections/wedge")
            // The wedge reaches the connection through its event loop; wait for it without a clock.
            var wedged = try await fourth.send(.push(token: tokenA, jwt: jwt))
            for _ in 0..<100 where wedged.reason != "ExpiredProviderToken" {
                try await Task.sleep(for: .milliseconds(10))
                wedged = try await fourth.send(.push(token: tokenA, jwt: jwt))
            }
            #expect(wedged.reason == "ExpiredProviderToken")
            _ = try await control.post("/connections/goaway", #"{"reason":"Shutdown"}"#)
            try await fourth.waitFor("GOAWAY") { $0.goAway != nil }
            #expect(try await fourth.goAway?.debug == #"{"reason":"Shutdown"}"#)

            let fifth = try await TestClient.connect(to: emulator)
            #expect(try await fifth.send(.push(token: tokenA, jwt: jwt)).status == 200)
            _ = try await control.post("/connections/reset")
            try await fifth.waitFor("reset") { $0.closed }
            #expect(try await fifth.goAway == nil)
        }
    }
}
