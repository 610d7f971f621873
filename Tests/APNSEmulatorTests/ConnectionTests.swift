import APNSCore
import EmulatorTestSupport
import Foundation
import NIOCore
import NIOHTTP2
import Testing

@testable import APNSEmulator

@Suite("Connection behaviour: stream limits, token binding, GOAWAY")
struct ConnectionTests {
    @Test("Token connections start at 1 stream and get 1000 after the first valid token")
    func streamLimitRaised() async throws {
        try await withEmulator { emulator, key in
            let client = try await TestClient.connect(to: emulator)
            defer { Task { await client.close() } }
            try await client.waitFor("initial SETTINGS") { !$0.maxStreams.isEmpty }
            #expect(try await client.maxConcurrentStreamsReceived == [1])
            let rejected = try await client.send(.push(token: tokenA, jwt: nil))
            #expect(rejected.reason == "MissingProviderToken")
            #expect(try await client.maxConcurrentStreamsReceived == [1])
            let response = try await client.send(.push(token: tokenA, jwt: key.token()))
            #expect(response.status == 200)
            #expect(try await client.maxConcurrentStreamsReceived == [1, 1000])
        }
    }

    @Test("Streams over the limit get RST_STREAM REFUSED_STREAM")
    func overLimitRefused() async throws {
        try await withEmulator { emulator, key in
            let jwt = key.token()
            let client = try await TestClient.connect(to: emulator, burst: [
                .push(token: tokenA, jwt: jwt), .push(token: tokenA, jwt: jwt), .push(token: tokenA, jwt: jwt),
            ])
            defer { Task { await client.close() } }
            let responses = try await client.burstResponses()
            #expect(responses[0].status == 200)
            #expect(responses[1].end == .reset(.refusedStream))
            #expect(responses[2].end == .reset(.refusedStream))
            #expect(emulator.counters.refusedStreams == 2)
            // After the raise, concurrent streams are fine.
            let later = try await client.sendInterleaved([.push(token: tokenA, jwt: jwt), .push(token: tokenA, jwt: jwt)])
            #expect(later.map(\.status) == [200, 200])
        }
    }

    @Test("A second team on one connection: InvalidProviderToken")
    func oneTeamPerConnection() async throws {
        let other = TestKey(keyID: "KEY2222222", teamID: "TEAM222222")
        try await withEmulator(extraKeys: [other.authKey()], configure: { $0.providerTokenUpdateInterval = 0 }) { emulator, key in
            let client = try await TestClient.connect(to: emulator)
            defer { Task { await client.close() } }
            #expect(try await client.send(.push(token: tokenA, jwt: key.token())).status == 200)
            #expect(try await client.send(.push(token: tokenA, jwt: other.token())).reason == "InvalidProviderToken")
            let fresh = try await TestClient.connect(to: emulator)
            defer { Task { await fresh.close() } }
            #expect(try await fresh.send(.push(token: tokenA, jwt: other.token())).status == 200)
        }
    }

    @Test("Topic-specific keys: unrelated key → UnrelatedKeyIdInToken; other environment → BadEnvironmentKeyIdInToken; foreign topic → TopicDisallowed")
    func keyBinding() async throws {
        let topicKey = TestKey(keyID: "KEYTOPIC01", teamID: "TEAM123456")
        let productionKey = TestKey(keyID: "KEYPROD001", teamID: "TEAM123456")
        let extra = [
            topicKey.authKey(bundleIDs: ["com.example.app"]),
            productionKey.authKey(environment: .production),
        ]
        try await withEmulator(extraKeys: extra, configure: { $0.providerTokenUpdateInterval = 0 }) { emulator, key in
            let client = try await TestClient.connect(to: emulator)
            defer { Task { await client.close() } }
            #expect(try await client.send(.push(token: tokenA, jwt: key.token())).status == 200)
            #expect(try await client.send(.push(token: tokenA, jwt: topicKey.token())).reason == "UnrelatedKeyIdInToken")
            #expect(try await client.send(.push(token: tokenA, jwt: productionKey.token())).reason == "BadEnvironmentKeyIdInToken")
            let second = try await TestClient.connect(to: emulator)
            defer { Task { await second.close() } }
            #expect(try await second.send(.push(token: tokenB, topic: "com.example.other", jwt: topicKey.token())).reason == "TopicDisallowed")
        }
    }

    @Test("A new token within 20 minutes of the last change: 429 TooManyProviderTokenUpdates")
    func tokenUpdates() async throws {
        let clock = TestClock()
        try await withEmulator(clock: clock) { emulator, key in
            let client = try await TestClient.connect(to: emulator)
            defer { Task { await client.close() } }
            let first = key.token(issuedAt: clock.now)
            #expect(try await client.send(.push(token: tokenA, jwt: first)).status == 200)
            clock.advance(by: 5 * 60)
            let second = key.token(issuedAt: clock.now)
            let early = try await client.send(.push(token: tokenA, jwt: second))
            #expect(early.status == 429)
            #expect(early.reason == "TooManyProviderTokenUpdates")
            // The old token still works; the new one is accepted 20 minutes after the last change.
            #expect(try await client.send(.push(token: tokenA, jwt: first)).status == 200)
            clock.advance(by: 15 * 60)
            #expect(try await client.send(.push(token: tokenA, jwt: second)).status == 200)
            // 60 minutes after its iat the first token has expired.
            clock.advance(by: 41 * 60)
            #expect(try await client.send(.push(token: tokenA, jwt: first)).reason == "ExpiredProviderToken")
        }
    }

    @Test("Idle connections get GOAWAY IdleTimeout")
    func idleTimeout() async throws {
        // No request at all: under a loaded test run even the first request can come later than
        // any short timeout, and an idle connection is what this is about.
        try await withEmulator(configure: { $0.idleTimeout = .milliseconds(300) }) { emulator, _ in
            let client = try await TestClient.connect(to: emulator)
            defer { Task { await client.close() } }
            try await client.waitFor("GOAWAY") { $0.goAway != nil }
            let goAway = try #require(try await client.goAway)
            #expect(goAway.debug == #"{"reason":"IdleTimeout"}"#)
            #expect(goAway.lastStreamID == 0)
        }
    }

    @Test("Shutdown sends GOAWAY Shutdown")
    func shutdownGoAway() async throws {
        try await withEmulator { emulator, key in
            let client = try await TestClient.connect(to: emulator)
            defer { Task { await client.close() } }
            #expect(try await client.send(.push(token: tokenA, jwt: key.token())).status == 200)
            try await emulator.shutdown()
            try await client.waitFor("GOAWAY") { $0.goAway != nil }
            #expect(try await client.goAway?.debug == #"{"reason":"Shutdown"}"#)
        }
    }
}

@Suite("The connection rules, without sockets")
struct ConnectionRulesTests {
    let key = TestKey()

    func policy() -> RequestPolicy {
        var configuration = APNSEmulatorConfiguration(authKeys: [key.authKey()], bundleIDs: ["com.example.app"])
        configuration.environment = .sandbox
        return RequestPolicy(configuration: configuration)
    }

    func head(_ jwt: String) -> RequestHead {
        var head = RequestHead(method: "POST", path: "/3/device/\(tokenA)")
        head.authorization = "bearer \(jwt)"
        head.topic = "com.example.app"
        head.pushType = "alert"
        return head
    }

    func reason(_ result: (evaluation: Evaluation, settings: Int?)) -> APNSReason? {
        if case .rejected(let reason, _, _) = result.evaluation { return reason }
        return nil
    }

    @Test("First valid token raises the limit once; token changes are rate limited")
    func transitions() {
        var rules = ConnectionRules(authentication: .token, configuredStreamLimit: 1000, initialStreamsBeforeAuthentication: 1)
        let policy = policy()
        let start = Date(timeIntervalSince1970: 1_800_000_000)
        let body = Array(#"{"aps":{}}"#.utf8)
        let first = key.token(issuedAt: start)
        let r1 = rules.evaluate(head(first), body: body, now: start, policy: policy, makeID: { "ID" })
        #expect(reason(r1) == nil)
        #expect(r1.settings == 1000)
        let r2 = rules.evaluate(head(first), body: body, now: start, policy: policy, makeID: { "ID" })
        #expect(r2.settings == nil)
        let second = key.token(issuedAt: start.addingTimeInterval(60))
        #expect(reason(rules.evaluate(head(second), body: body, now: start.addingTimeInterval(60), policy: policy, makeID: { "ID" })) == .tooManyProviderTokenUpdates)
        #expect(reason(rules.evaluate(head(second), body: body, now: start.addingTimeInterval(20 * 60), policy: policy, makeID: { "ID" })) == nil)
        #expect(rules.requestsReceived == 4)
    }

    @Test("Throttle on reject drops the limit to 1 and restores it after a 200")
    func throttle() {
        var rules = ConnectionRules(authentication: .certificate(baseTopic: "com.example.app"), configuredStreamLimit: 500, initialStreamsBeforeAuthentication: 1)
        #expect(rules.advertisedStreamLimit == 500)
        #expect(rules.responded(status: 400, throttleOnReject: true) == 1)
        #expect(rules.responded(status: 400, throttleOnReject: true) == nil)
        #expect(rules.responded(status: 200, throttleOnReject: true) == 500)
    }
}
