import BeckonEvents
import BeckonJSON
import BeckonStore
import Foundation
import Logging
import Metrics
import Testing
import WebhookTestSupport

/// Two nodes on one PostgreSQL database, both running the webhooks (`BECKON_TEST_POSTGRES_URL`;
/// skipped without it): one sends at a time, and when it stops the other goes on from its cursor.
@Suite struct TwoNodeWebhookTests {
    static let url = ProcessInfo.processInfo.environment["BECKON_TEST_POSTGRES_URL"]

    @Test(.enabled(if: url != nil)) func whenTheSendingNodeStopsTheOtherGoesOnAndNothingIsLost() async throws {
        let receiver = try await LoopbackReceiver()
        let name = "beckon_events_\(UUID().uuidString.prefix(8).lowercased())"
        let admin = try PostgresStore(url: Self.url!, logger: Logger(label: "beckon.store.test"))
        let adminPool = Task { await admin.run() }
        try await admin.execute(unsafeSQL: "CREATE DATABASE \(name)")
        var components = URLComponents(string: Self.url!)!
        components.path = "/" + name
        let a = try PostgresStore(url: components.string!, logger: Logger(label: "beckon.store.test"))
        let b = try PostgresStore(url: components.string!, logger: Logger(label: "beckon.store.test"))
        let pools = [Task { await a.run() }, Task { await b.run() }]
        do {
            try await a.migrate()
            try await a.createApp(App(id: "chat", bundleID: "com.example.chat", teamID: "TEAM123456", environments: [.production]))
            var timing = EventServiceTests.timing
            timing.lease = 1
            let services = [(a, "node-a"), (b, "node-b")].map { store, node in
                EventService(
                    apps: [EventServiceTests.settings(port: receiver.port)], node: node, log: store,
                    metricsFactory: NOOPMetricsHandler.instance, timing: timing)
            }
            // Node a takes the lease first.
            let first = Task { [service = services[0]] in try await service.run() }
            let leased = ContinuousClock.now + .seconds(60)
            while try await a.eventLogStatus(appID: "chat", now: Date())?.sender == nil, ContinuousClock.now < leased {
                try await Task.sleep(for: .milliseconds(20))
            }
            let second = Task { [service = services[1]] in try await service.run() }
            #expect(try await a.eventLogStatus(appID: "chat", now: Date())?.sender == "node-a")
            for round in 0..<6 {
                let store = round.isMultiple(of: 2) ? a : b
                _ = try await store.appendMessages(appID: "chat", (0..<50).map { _ in NewMessage(recipients: ["ann"]) })
                if round == 2 { first.cancel() }  // node a stops; its lease lapses, b takes over
            }
            func ids() -> [Int64] {
                receiver.received.flatMap { (try? JSONParser.parse($0.body))?["events"]?.arrayValue ?? [] }
                    .compactMap { $0["id"]?.stringValue.flatMap { Int64($0) } }
            }
            let deadline = ContinuousClock.now + .seconds(120)
            while Set(ids()).count < 300, ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(50)) }
            // The last batch's cursor moves once its answer is back.
            var status = try await a.eventLogStatus(appID: "chat", now: Date())
            while status?.behind != 0, ContinuousClock.now < deadline {
                try await Task.sleep(for: .milliseconds(20))
                status = try await a.eventLogStatus(appID: "chat", now: Date())
            }
            second.cancel()
            _ = try? await first.value
            _ = try? await second.value
            #expect(Set(ids()).count == 300, "every event, whichever node sent it")
            #expect(status?.sender == "node-b", "node a stopped: b holds the webhook")
            #expect(status?.behind == 0)
        } catch {
            Issue.record(error)
        }
        for pool in pools { pool.cancel() }
        _ = try? await admin.execute(unsafeSQL: "DROP DATABASE \(name) WITH (FORCE)")
        adminPool.cancel()
        try await receiver.close()
    }
}
