import APNSCore
import EmulatorTestSupport
import Foundation
import Testing

@testable import APNSEmulator

@Suite("Per-connection error budget (apns.md C.4, G.15)")
struct ErrorBudgetTests {
    @Test("Pure: 4xx other than 410 count; BadDeviceToken has its own lower limit")
    func machine() {
        var rules = ConnectionRules(authentication: .token, configuredStreamLimit: 1000, initialStreamsBeforeAuthentication: 1)
        let budget = APNSEmulatorErrorBudget(errors: 3, badDeviceTokenErrors: 2)
        let answers: [(Int, APNSReason)] = [
            (410, .unregistered), (500, .internalServerError), (400, .badDeviceToken), (400, .badDeviceToken),
        ]
        let unbudgeted = rules.countError(status: 400, reason: .badTopic, budget: nil)
        #expect(!unbudgeted)
        var exhausted = answers.map { rules.countError(status: $0.0, reason: $0.1, budget: budget) }
        #expect(exhausted == [false, false, false, true])

        var other = ConnectionRules(authentication: .token, configuredStreamLimit: 1000, initialStreamsBeforeAuthentication: 1)
        let mixed: [(Int, APNSReason)] = [(400, .badTopic), (403, .invalidProviderToken), (413, .payloadTooLarge)]
        exhausted = mixed.map { other.countError(status: $0.0, reason: $0.1, budget: budget) }
        #expect(exhausted == [false, false, true])
    }

    @Test("Over HTTP/2: GOAWAY with the last error's reason once the budget is spent")
    func overTheWire() async throws {
        try await withEmulator(configure: { $0.autoRegister = false }) { emulator, key in
            emulator.setErrorBudget(errors: 10, badDeviceTokenErrors: 2)
            let client = try await TestClient.connect(to: emulator)
            defer { Task { await client.close() } }
            let jwt = key.token()
            #expect(try await client.send(.push(token: tokenA, jwt: jwt)).reason == "BadDeviceToken")
            #expect(try await client.send(.push(token: tokenA, jwt: jwt)).reason == "BadDeviceToken")
            try await client.waitFor("GOAWAY") { $0.goAway != nil }
            let goAway = try #require(try await client.goAway)
            #expect(goAway.debug == #"{"reason":"BadDeviceToken"}"#)
            #expect(goAway.lastStreamID == 3)
            #expect(emulator.counters.errorBudgetDisconnects == 1)

            // A fresh connection starts with a fresh budget; 410s are free.
            try emulator.registerDevice(token: tokenB, bundleID: "com.example.app")
            try emulator.unregisterDevice(token: tokenB)
            let second = try await TestClient.connect(to: emulator)
            defer { Task { await second.close() } }
            for _ in 0..<12 { #expect(try await second.send(.push(token: tokenB, jwt: jwt)).status == 410) }
            #expect(try await second.goAway == nil)
        }
    }

    @Test("Off by default; set from the control API")
    func control() async throws {
        try await withControl { emulator, _, control in
            #expect(try await control.get("/faults").json["errorBudget"] is NSNull)
            let reply = try await control.post("/faults", #"{"type":"error-budget","errors":5}"#)
            let budget = try #require(reply.json["errorBudget"] as? [String: Any])
            #expect(budget["errors"] as? Int == 5)
            #expect(budget["badDeviceTokenErrors"] is NSNull)
            _ = try await control.post("/faults", #"{"type":"error-budget"}"#)
            #expect(try await control.get("/faults").json["errorBudget"] is NSNull)
        }
    }
}
