import APNSCore
import EmulatorTestSupport
import Foundation
import Testing

@testable import APNSEmulator

@Suite("Requests are answered as APNs answers them")
struct ValidationTests {
    @Test("200: HEADERS only, the request's apns-id echoed, apns-unique-id in sandbox")
    func success() async throws {
        try await withEmulator { emulator, key in
            let client = try await TestClient.connect(to: emulator)
            defer { Task { await client.close() } }
            let id = "eabeae54-14a8-11e5-b60b-1697f925ec7b"
            let jwt = key.token()
            let response = try await client.send(
                .push(token: tokenA, jwt: jwt, extra: [("apns-id", id)])
            )
            #expect(response.status == 200)
            #expect(response.headers["apns-id"] == id)
            #expect(response.headers["apns-unique-id"] != nil)
            #expect(response.body.isEmpty)
            #expect(response.headers["content-type"] == nil)

            let generated = try await client.send(.push(token: tokenA, jwt: jwt))
            let generatedID = try #require(generated.headers["apns-id"])
            #expect(UUID(uuidString: generatedID) != nil)
            #expect(generatedID == generatedID.uppercased())

            let log = emulator.deliveries(to: tokenA)
            #expect(log.count == 2)
            #expect(log[0].apnsID == id)
            #expect(log[0].payloadString == #"{"aps":{"alert":"hi"}}"#)
            #expect(log[0].headers["apns-push-type"] == "alert")
            #expect(log[0].headers["authorization"] == nil)
            #expect(emulator.counters.count(status: 200) == 2)
        }
    }

    @Test("No apns-unique-id in production")
    func productionHasNoUniqueID() async throws {
        try await withEmulator(configure: { $0.environment = .production }) { emulator, key in
            let client = try await TestClient.connect(to: emulator)
            defer { Task { await client.close() } }
            let response = try await client.send(.push(token: tokenA, jwt: key.token()))
            #expect(response.status == 200)
            #expect(response.headers["apns-unique-id"] == nil)
        }
    }

    @Test("A client offering no ALPN is still served HTTP/2")
    func noALPN() async throws {
        try await withEmulator { emulator, key in
            let client = try await TestClient.connect(to: emulator, alpn: [])
            defer { Task { await client.close() } }
            let response = try await client.send(.push(token: tokenA, jwt: key.token()))
            #expect(response.status == 200)
        }
    }

    struct Case: Sendable, CustomStringConvertible {
        var name: String
        var reason: APNSReason
        var request: @Sendable (TestKey) -> TestRequest
        var description: String { name }
    }

    static let cases: [Case] = [
        Case(name: "duplicate header", reason: .duplicateHeaders) {
            .push(token: tokenA, jwt: $0.token(), extra: [("apns-priority", "10"), ("apns-priority", "5")])
        },
        Case(name: "GET", reason: .methodNotAllowed) { .push(token: tokenA, jwt: $0.token(), method: "GET") },
        Case(name: "wrong path", reason: .badPath) { .push(token: tokenA, jwt: $0.token(), path: "/2/device/\(tokenA)") },
        Case(name: "no token in path", reason: .missingDeviceToken) { .push(token: tokenA, jwt: $0.token(), path: "/3/device/") },
        Case(name: "bad apns-id", reason: .badMessageId) {
            .push(token: tokenA, jwt: $0.token(), extra: [("apns-id", "not-a-uuid")])
        },
        Case(name: "no authorization", reason: .missingProviderToken) { _ in .push(token: tokenA, jwt: nil) },
        Case(name: "garbage token", reason: .invalidProviderToken) { _ in .push(token: tokenA, jwt: "a.b.c") },
        Case(name: "HS256", reason: .invalidProviderToken) { .push(token: tokenA, jwt: $0.token(alg: "HS256")) },
        Case(name: "unknown kid", reason: .invalidProviderToken) { .push(token: tokenA, jwt: $0.token(kid: "NOPE000000")) },
        Case(name: "iss not the key's team", reason: .invalidProviderToken) { .push(token: tokenA, jwt: $0.token(iss: "OTHER00000")) },
        Case(name: "bad signature", reason: .invalidProviderToken) { key in
            .push(token: tokenA, jwt: TestKey(keyID: key.keyID, teamID: key.teamID).token())
        },
        Case(name: "string iat (off by default)", reason: .invalidProviderToken) {
            .push(token: tokenA, jwt: $0.token(iatJSON: "\"\(Int(Date().timeIntervalSince1970))\""))
        },
        Case(name: "iat older than an hour", reason: .expiredProviderToken) {
            .push(token: tokenA, jwt: $0.token(issuedAt: Date().addingTimeInterval(-3601)))
        },
        Case(name: "auth before device token", reason: .missingProviderToken) { _ in .push(token: "zz", jwt: nil) },
        Case(name: "unknown push type", reason: .invalidPushType) { .push(token: tokenA, jwt: $0.token(), pushType: "banner") },
        Case(name: "no topic", reason: .missingTopic) { .push(token: tokenA, topic: nil, jwt: $0.token()) },
        Case(name: "malformed topic", reason: .badTopic) { .push(token: tokenA, topic: "com example", jwt: $0.token()) },
        Case(name: "unknown topic", reason: .topicDisallowed) { .push(token: tokenA, topic: "com.nope.app", jwt: $0.token()) },
        Case(name: "voip type on the app topic", reason: .invalidPushType) {
            .push(token: tokenA, jwt: $0.token(), pushType: "voip")
        },
        Case(name: "alert type on the voip topic", reason: .invalidPushType) {
            .push(token: tokenA, topic: "com.example.app.voip", jwt: $0.token(), pushType: "alert")
        },
        Case(name: "priority 7", reason: .badPriority) {
            .push(token: tokenA, jwt: $0.token(), extra: [("apns-priority", "7")])
        },
        Case(name: "background at priority 10", reason: .badPriority) {
            .push(token: tokenA, jwt: $0.token(), pushType: "background", extra: [("apns-priority", "10")],
                  body: #"{"aps":{"content-available":1}}"#)
        },
        Case(name: "background with an alert", reason: .invalidPushType) {
            .push(token: tokenA, jwt: $0.token(), pushType: "background", extra: [("apns-priority", "5")],
                  body: #"{"aps":{"content-available":1,"alert":"x"}}"#)
        },
        Case(name: "expiration not an integer", reason: .badExpirationDate) {
            .push(token: tokenA, jwt: $0.token(), extra: [("apns-expiration", "tomorrow")])
        },
        Case(name: "collapse id of 65 bytes", reason: .badCollapseId) {
            .push(token: tokenA, jwt: $0.token(), extra: [("apns-collapse-id", String(repeating: "x", count: 65))])
        },
        Case(name: "empty body", reason: .payloadEmpty) { .push(token: tokenA, jwt: $0.token(), body: "") },
        Case(name: "4097-byte alert", reason: .payloadTooLarge) {
            .push(token: tokenA, jwt: $0.token(), body: alertBody(size: 4097))
        },
        Case(name: "5121-byte voip", reason: .payloadTooLarge) {
            .push(token: tokenB, topic: "com.example.app.voip", jwt: $0.token(), pushType: "voip",
                  body: alertBody(size: 5121))
        },
        Case(name: "token not hex", reason: .badDeviceToken) { .push(token: String(repeating: "zz", count: 32), jwt: $0.token()) },
        Case(name: "token too short", reason: .badDeviceToken) { .push(token: "abcd", jwt: $0.token()) },
        Case(name: "token of the other environment", reason: .badDeviceToken) { .push(token: tokenC, jwt: $0.token()) },
        Case(name: "token of another app", reason: .deviceTokenNotForTopic) {
            .push(token: tokenA, topic: "com.example.other", jwt: $0.token())
        },
        Case(name: "app token with a voip push", reason: .deviceTokenNotForTopic) {
            .push(token: tokenA, topic: "com.example.app.voip", jwt: $0.token(), pushType: "voip")
        },
    ]

    @Test("Each rejection gets its status, content-type, apns-id and {\"reason\"}", arguments: cases)
    func rejection(_ testCase: Case) async throws {
        try await withEmulator(configure: { $0.autoRegister = false }) { emulator, key in
            try emulator.registerDevice(token: tokenA, bundleID: "com.example.app")
            try emulator.registerDevice(token: tokenB, bundleID: "com.example.app", kind: .voip)
            try emulator.registerDevice(token: tokenC, bundleID: "com.example.app", environment: .production)
            let client = try await TestClient.connect(to: emulator)
            defer { Task { await client.close() } }
            let response = try await client.send(testCase.request(key))
            #expect(response.status == testCase.reason.status, "\(testCase.name)")
            #expect(response.reason == testCase.reason.rawValue, "\(testCase.name)")
            #expect(response.headers["content-type"] == "application/json")
            #expect(response.headers["apns-id"].flatMap(UUID.init(uuidString:)) != nil)
            #expect(response.json["timestamp"] == nil)
            #expect(emulator.counters.count(testCase.reason) == 1)
            #expect(emulator.deliveries(to: tokenA).isEmpty)
        }
    }

    @Test("5120-byte voip and 4096-byte alert payloads are accepted")
    func limits() async throws {
        try await withEmulator { emulator, key in
            let client = try await TestClient.connect(to: emulator)
            defer { Task { await client.close() } }
            let jwt = key.token()
            let alert = try await client.send(.push(token: tokenA, jwt: jwt, body: alertBody(size: 4096)))
            #expect(alert.status == 200)
            let voip = try await client.send(
                .push(token: tokenB, topic: "com.example.app.voip", jwt: jwt, pushType: "voip", body: alertBody(size: 5120))
            )
            #expect(voip.status == 200)
            #expect(emulator.device(token: tokenB)?.kind == .voip)
        }
    }

    @Test("Unknown token without auto-register: BadDeviceToken")
    func unknownToken() async throws {
        try await withEmulator(configure: { $0.autoRegister = false }) { emulator, key in
            let client = try await TestClient.connect(to: emulator)
            defer { Task { await client.close() } }
            let response = try await client.send(.push(token: tokenA, jwt: key.token()))
            #expect(response.reason == "BadDeviceToken")
        }
    }

    @Test("410 Unregistered carries the unregistration time in milliseconds")
    func unregistered() async throws {
        let clock = TestClock()
        try await withEmulator(clock: clock) { emulator, key in
            try emulator.registerDevice(token: tokenA, bundleID: "com.example.app")
            clock.advance(by: 10)
            try emulator.unregisterDevice(token: tokenA)
            let unregisteredAt = clock.now
            clock.advance(by: 60)
            let client = try await TestClient.connect(to: emulator)
            defer { Task { await client.close() } }
            let response = try await client.send(.push(token: tokenA, jwt: key.token(issuedAt: clock.now)))
            #expect(response.status == 410)
            #expect(response.reason == "Unregistered")
            let timestamp = try #require(response.json["timestamp"] as? Int)
            #expect(timestamp == Int(unregisteredAt.timeIntervalSince1970 * 1000))
        }
    }

    @Test("String iat is accepted when enabled (seconds, or Apple's milliseconds)")
    func stringIssuedAt() async throws {
        try await withEmulator(configure: { $0.acceptStringIssuedAt = true }) { emulator, key in
            let client = try await TestClient.connect(to: emulator)
            defer { Task { await client.close() } }
            let seconds = Int(Date().timeIntervalSince1970)
            let response = try await client.send(.push(token: tokenA, jwt: key.token(iatJSON: "\"\(seconds)\"")))
            #expect(response.status == 200)
        }
    }
}

/// A JSON alert payload of exactly `size` bytes.
func alertBody(size: Int) -> String {
    let body = #"{"aps":{"alert":""# + String(repeating: "x", count: size - 20) + #""}}"#
    precondition(body.utf8.count == size)
    return body
}
