import BeckonEvents
import BeckonJSON
import BeckonStore
import WebhookTestSupport
import Foundation
import Metrics
import Testing

/// The service against a real store and a receiver on loopback: every event arrives, in order,
/// signed, through a receiver's failures.
@Suite struct EventServiceTests {
    static func withStore(_ body: (SQLiteStore) async throws -> Void) async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(UUID().uuidString).path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let store = try SQLiteStore(path: directory + "/beckon.sqlite")
        try await store.createApp(App(id: "chat", bundleID: "com.example.chat", teamID: "TEAM123456", environments: [.production]))
        _ = try await store.registerDevice(DeviceRegistration(
            appID: "chat", deviceID: "phone", userID: "ann", bundleID: "com.example.chat", environment: .production,
            pushToken: String(repeating: "ab", count: 32)))
        try await body(store)
    }

    static func settings(port: Int) -> AppEvents {
        var webhook = WebhookSettings(url: WebhookURL("http://127.0.0.1:\(port)/hooks")!, secret: "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw")
        webhook.batchSize = 100
        webhook.retryInitial = 0.05
        webhook.retryMax = 0.2
        return AppEvents(appID: "chat", webhook: webhook)
    }

    static var timing: EventTiming {
        var timing = EventTiming()
        timing.pollInterval = 0.02
        timing.sweepInterval = 0.05
        return timing
    }

    /// The events a receiver took (answered 2xx), in the order it got them.
    static func accepted(_ receiver: LoopbackReceiver, answers: (Int) -> Int) throws -> [JSONValue] {
        try receiver.received.enumerated().filter { (200..<300).contains(answers($0.offset + 1)) }.flatMap { request in
            try JSONParser.parse(request.element.body)["events"]?.arrayValue ?? []
        }
    }

    @Test func everyEventArrivesInOrderSignedThroughTheReceiversFailures() async throws {
        let answers: @Sendable (Int) -> Int = { $0 <= 3 ? 500 : 204 }
        let receiver = try await LoopbackReceiver(answer: answers)
        try await Self.withStore { store in
            let service = EventService(
                apps: [Self.settings(port: receiver.port)], node: "node-a", log: store, metricsFactory: NOOPMetricsHandler.instance,
                timing: Self.timing)
            let running = Task { try await service.run() }
            try await Task.sleep(for: .milliseconds(100))  // the log is on
            let appended = try await store.appendMessages(appID: "chat", (0..<250).map { _ in NewMessage(recipients: ["ann"]) })
            _ = try await store.ack(device: DeviceRef(appID: "chat", deviceID: "phone"), upTo: 250)
            let deadline = ContinuousClock.now + .seconds(120)
            while try Self.accepted(receiver, answers: answers).count < 500, ContinuousClock.now < deadline {
                try await Task.sleep(for: .milliseconds(20))
            }
            // The last batch's cursor moves once its answer is back.
            while try await store.eventLogStatus(appID: "chat", now: Date())?.behind != 0, ContinuousClock.now < deadline {
                try await Task.sleep(for: .milliseconds(20))
            }
            running.cancel()
            _ = try? await running.value

            let events = try Self.accepted(receiver, answers: answers)
            let ids = events.compactMap { $0["id"]?.stringValue }.compactMap(Int64.init)
            #expect(ids.count == 500 && ids == ids.sorted() && Set(ids).count == 500, "each event once, in order")
            let messages = appended.map(\.message.id)
            #expect(events.filter { $0["type"]?.stringValue == "accepted" }.compactMap { $0["messageId"]?.stringValue } == messages)
            #expect(events.filter { $0["type"]?.stringValue == "delivered" }.compactMap { $0["messageId"]?.stringValue } == messages)
            #expect(events.first?["deviceId"] == nil && events.last?["deviceId"]?.stringValue == "phone")

            let requests = receiver.received
            #expect(requests.count >= 4)
            #expect(Set(requests.prefix(4).map { $0.headers["webhook-id"] }).count == 1, "a failed batch goes again as itself")
            let signer = WebhookSigner(secret: "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw")
            for request in requests {
                let id = try #require(request.headers["webhook-id"])
                let timestamp = try #require(request.headers["webhook-timestamp"].flatMap { Int($0) })
                #expect(signer.verify(id: id, timestamp: timestamp, body: request.body, header: request.headers["webhook-signature"] ?? ""))
                #expect(abs(Double(timestamp) - Date().timeIntervalSince1970) < 60)
                #expect(request.headers["content-type"] == "application/json")
            }

            let attempts = try await store.webhookAttempts(appID: "chat", limit: 100)
            #expect(attempts.filter { $0.status == 500 }.count == 3)
            #expect(attempts.filter(\.succeeded).map(\.events).reduce(0, +) == 500)
            let status = try #require(try await store.eventLogStatus(appID: "chat", now: Date()))
            #expect(status.behind == 0 && status.dropped == 0)
        }
        try await receiver.close()
    }

    @Test func aReceiverThatDoesNotAnswerIsAFailedAttemptAndNothingMoves() async throws {
        // The receiver takes the request and never answers.
        let receiver = try await LoopbackReceiver { _ in nil }
        var app = Self.settings(port: receiver.port)
        app.webhook.timeout = 0.2
        try await Self.withStore { store in
            let service = EventService(
                apps: [app], node: "node-a", log: store, metricsFactory: NOOPMetricsHandler.instance,
                timing: Self.timing)
            let running = Task { try await service.run() }
            try await Task.sleep(for: .milliseconds(100))
            _ = try await store.appendMessages(appID: "chat", [NewMessage(recipients: ["ann"])])
            let deadline = ContinuousClock.now + .seconds(10)
            while try await store.webhookAttempts(appID: "chat", limit: 10).count < 2, ContinuousClock.now < deadline {
                try await Task.sleep(for: .milliseconds(20))
            }
            running.cancel()
            _ = try? await running.value
            let attempts = try await store.webhookAttempts(appID: "chat", limit: 10)
            #expect(attempts.count >= 2 && attempts.allSatisfy { $0.status == 0 && $0.error?.contains("no answer") == true })
            #expect(try await store.eventLogStatus(appID: "chat", now: Date())?.behind == 1, "the event waits")
        }
        try await receiver.close()
    }
}
