import APNSCore
import EmulatorTestSupport
import Foundation
import NIOCore
import NIOHTTP2
import Testing

@testable import APNSEmulator

@Suite("Fault injection")
struct FaultTests {
    @Test("429 TooManyRequests for a token, for the next N requests")
    func tooManyRequests() async throws {
        try await withEmulator { emulator, key in
            emulator.respondTooManyRequests(deviceToken: tokenA, count: 2)
            let client = try await TestClient.connect(to: emulator)
            defer { Task { await client.close() } }
            let jwt = key.token()
            #expect(try await client.send(.push(token: tokenB, jwt: jwt)).status == 200)
            let first = try await client.send(.push(token: tokenA, jwt: jwt))
            #expect(first.status == 429)
            #expect(first.reason == "TooManyRequests")
            #expect(try await client.send(.push(token: tokenA, jwt: jwt)).status == 429)
            #expect(try await client.send(.push(token: tokenA, jwt: jwt)).status == 200)
            #expect(emulator.counters.count(.tooManyRequests) == 2)
        }
    }

    @Test("Random 500 InternalServerError and 503 ServiceUnavailable")
    func randomFailures() async throws {
        try await withEmulator { emulator, key in
            let client = try await TestClient.connect(to: emulator)
            defer { Task { await client.close() } }
            let jwt = key.token()
            emulator.setRandomFailures(internalServerErrorRate: 1)
            let error = try await client.send(.push(token: tokenA, jwt: jwt))
            #expect(error.status == 500)
            #expect(error.reason == "InternalServerError")
            emulator.setRandomFailures(serviceUnavailableRate: 1)
            let unavailable = try await client.send(.push(token: tokenA, jwt: jwt))
            #expect(unavailable.status == 503)
            #expect(unavailable.reason == "ServiceUnavailable")
            emulator.setRandomFailures()
            #expect(try await client.send(.push(token: tokenA, jwt: jwt)).status == 200)
            #expect(emulator.counters.count(status: 500) == 1)
            #expect(emulator.counters.count(status: 503) == 1)
        }
    }

    @Test("GOAWAY after N streams: later streams are not processed")
    func goAwayAfterStreams() async throws {
        try await withEmulator { emulator, key in
            emulator.goAway(afterStreams: 2)
            let client = try await TestClient.connect(to: emulator)
            defer { Task { await client.close() } }
            let jwt = key.token()
            #expect(try await client.send(.push(token: tokenA, jwt: jwt)).status == 200)
            // Bodyless requests: HEADERS with END_STREAM arrive in stream order.
            let responses = try await client.send([.push(token: tokenA, jwt: jwt, body: ""), .push(token: tokenA, jwt: jwt, body: "")])
            #expect(responses[0].reason == "PayloadEmpty")
            #expect(responses[1].end == .goAway)
            let goAway = try #require(try await client.goAway)
            #expect(goAway.lastStreamID == 3)
            #expect(goAway.debug == #"{"reason":"Shutdown"}"#)
            #expect(emulator.counters.requests == 2)
            try await client.waitFor("close") { $0.closed }
        }
    }

    /// A client has streams in flight when a GOAWAY leaves; those it opened after the
    /// last-stream-id are refused, each one a stream error for NIO. With NIO's defaults the 201st
    /// becomes a connection error: a second GOAWAY with last-stream-id 0, and the connection closed
    /// before the request below the first GOAWAY finished arriving, so the client would send it
    /// again elsewhere. Every stream at or below the GOAWAY must still be answered.
    @Test("GOAWAY after N streams: streams at or below it are answered however many follow")
    func goAwayAnswersTheStreamsBelowItDespiteManyRefused() async throws {
        try await withEmulator { emulator, key in
            let client = try await TestClient.connect(to: emulator)
            defer { Task { await client.close() } }
            let jwt = key.token()
            #expect(try await client.send(.push(token: tokenA, jwt: jwt)).status == 200)  // Lifts the limit of 1.
            emulator.goAway(afterStreams: 2)
            // Stream 3 opens first, its body comes last; stream 5 is the 2nd request: GOAWAY(5).
            let others = (0..<250).map { _ in TestRequest.push(token: tokenB, jwt: jwt) }
            let responses = try await client.sendHoldingBody(of: .push(token: tokenA, jwt: jwt), around: others)
            #expect(responses[0].end == .complete)
            #expect(responses[0].status == 200)
            #expect(responses[1].status == 200)
            #expect(responses.dropFirst(2).allSatisfy { $0.status == nil })
            #expect(try await client.goAway?.lastStreamID == 5)
            #expect(emulator.deliveries(to: tokenA).count == 2)
            #expect(emulator.deliveries(to: tokenB).count == 1)
        }
    }

    @Test("Delayed answers still arrive")
    func delay() async throws {
        try await withEmulator { emulator, key in
            emulator.setResponseDelay(.milliseconds(50))
            emulator.injectFault(.delay(.milliseconds(20)), deviceToken: tokenB, count: 1)
            let client = try await TestClient.connect(to: emulator)
            defer { Task { await client.close() } }
            let jwt = key.token()
            #expect(try await client.send(.push(token: tokenA, jwt: jwt)).status == 200)
            #expect(try await client.send(.push(token: tokenB, jwt: jwt)).status == 200)
        }
    }

    @Test("Streams that never answer")
    func neverRespond() async throws {
        try await withEmulator { emulator, key in
            let client = try await TestClient.connect(to: emulator)
            let jwt = key.token()
            #expect(try await client.send(.push(token: tokenA, jwt: jwt)).status == 200)
            emulator.neverRespond(deviceToken: tokenB, count: 1)
            let silent = try await client.start(.push(token: tokenB, jwt: jwt))
            #expect(try await client.send(.push(token: tokenA, jwt: jwt)).status == 200)
            #expect(emulator.counters.unanswered == 1)
            await client.close()
            #expect(try await silent.get().end == .closed)
        }
    }

    @Test("Connection reset after N streams")
    func reset() async throws {
        try await withEmulator { emulator, key in
            emulator.resetConnections(afterStreams: 1)
            let client = try await TestClient.connect(to: emulator)
            defer { Task { await client.close() } }
            let jwt = key.token()
            #expect(try await client.send(.push(token: tokenA, jwt: jwt)).status == 200)
            #expect(try await client.send(.push(token: tokenA, jwt: jwt)).end == .closed)
            #expect(try await client.goAway == nil)
            #expect(emulator.counters.connectionResets == 1)
            #expect(emulator.deliveries(to: tokenA).count == 1)
        }
    }

    @Test("A wedged connection answers ExpiredProviderToken even to fresh tokens; a new connection works")
    func wedge() async throws {
        try await withEmulator { emulator, key in
            emulator.setWedgeOnExpiredToken(true)
            let client = try await TestClient.connect(to: emulator)
            defer { Task { await client.close() } }
            let stale = key.token(issuedAt: Date().addingTimeInterval(-4000))
            #expect(try await client.send(.push(token: tokenA, jwt: stale)).reason == "ExpiredProviderToken")
            let fresh = key.token()
            #expect(try await client.send(.push(token: tokenA, jwt: fresh)).reason == "ExpiredProviderToken")
            let second = try await TestClient.connect(to: emulator)
            defer { Task { await second.close() } }
            #expect(try await second.send(.push(token: tokenA, jwt: fresh)).status == 200)
            emulator.wedgeLiveConnections()
            try await Task.sleep(for: .milliseconds(20))
            #expect(try await second.send(.push(token: tokenA, jwt: fresh)).reason == "ExpiredProviderToken")
        }
    }

    @Test("MAX_CONCURRENT_STREAMS changed on live connections; excess in-flight streams refused")
    func liveStreamLimit() async throws {
        try await withEmulator { emulator, key in
            let client = try await TestClient.connect(to: emulator)
            defer { Task { await client.close() } }
            let jwt = key.token()
            #expect(try await client.send(.push(token: tokenA, jwt: jwt)).status == 200)
            emulator.neverRespond(count: 3)
            let pending = [
                try await client.start(.push(token: tokenA, jwt: jwt)),
                try await client.start(.push(token: tokenA, jwt: jwt)),
                try await client.start(.push(token: tokenA, jwt: jwt)),
            ]
            try await client.waitFor("requests arrive") { _ in emulator.counters.unanswered == 3 }
            emulator.setMaxConcurrentStreams(1, refuseExcessInFlight: true)
            try await client.waitFor("SETTINGS") { $0.maxStreams.last == 1 }
            #expect(try await client.maxConcurrentStreamsReceived == [1, 1000, 1])
            #expect(try await pending[1].get().end == .reset(.refusedStream))
            #expect(try await pending[2].get().end == .reset(.refusedStream))
            #expect(emulator.counters.refusedStreams == 2)
            // New connections get the new limit once authenticated.
            emulator.setMaxConcurrentStreams(7)
            let second = try await TestClient.connect(to: emulator)
            defer { Task { await second.close() } }
            #expect(try await second.send(.push(token: tokenA, jwt: jwt)).status == 200)
            #expect(try await second.maxConcurrentStreamsReceived == [1, 7])
        }
    }

    @Test("Throttle on reject: limit 1 after an error, restored after a 200")
    func throttleOnReject() async throws {
        try await withEmulator { emulator, key in
            emulator.setThrottleOnReject(true)
            let client = try await TestClient.connect(to: emulator)
            defer { Task { await client.close() } }
            let jwt = key.token()
            #expect(try await client.send(.push(token: tokenA, jwt: jwt)).status == 200)
            #expect(try await client.send(.push(token: tokenA, jwt: jwt, body: "")).reason == "PayloadEmpty")
            #expect(try await client.send(.push(token: tokenA, jwt: jwt)).status == 200)
            #expect(try await client.maxConcurrentStreamsReceived == [1, 1000, 1, 1000])
        }
    }

    @Test("GOAWAY and reset on demand; reset() clears counters, logs and faults")
    func onDemand() async throws {
        try await withEmulator { emulator, key in
            let jwt = key.token()
            let client = try await TestClient.connect(to: emulator)
            defer { Task { await client.close() } }
            #expect(try await client.send(.push(token: tokenA, jwt: jwt)).status == 200)
            emulator.goAwayLiveConnections(reason: .serviceUnavailable)
            // 15 s: with the whole suite on two cores the event loops can be seconds behind.
            try await client.waitFor("GOAWAY", timeout: .seconds(15)) { $0.goAway != nil }
            #expect(try await client.goAway?.debug == #"{"reason":"ServiceUnavailable"}"#)

            let other = try await TestClient.connect(to: emulator)
            #expect(try await other.send(.push(token: tokenA, jwt: jwt)).status == 200)
            emulator.resetLiveConnections()
            try await other.waitFor("close") { $0.closed }

            emulator.respond(with: .internalServerError)
            emulator.reset()
            #expect(emulator.counters == APNSEmulatorCounters())
            #expect(emulator.deliveries(to: tokenA).isEmpty)
            let third = try await TestClient.connect(to: emulator)
            defer { Task { await third.close() } }
            #expect(try await third.send(.push(token: tokenA, jwt: jwt)).status == 200)
        }
    }
}
