@testable import BeckonServer
import BeckonStore
import Foundation
import Metrics
import Prometheus
import Testing

/// The connection-level behaviour of `GET /v1/sync` (BeckonHTTPChannel, SyncChannelHandler):
/// drops without a close, silent peers, refusals before the upgrade, the connect rate, metrics.
@Suite struct SyncConnectionTests {
    static let phone = DeviceRef(appID: "chat", deviceID: "phone")

    @Test func aTCPResetWithoutACloseIsADrop() async throws {
        try await SyncTestServer.with { server in
            let events = SyncEventLog(server.hub)
            let credential = try await server.device(user: "alice", device: "phone")
            let raw = try await SyncRawClient.open(port: server.port)
            let head = try await raw.upgrade(credential: credential)
            #expect(head.hasPrefix("HTTP/1.1 101"))
            #expect(head.lowercased().contains("sec-websocket-protocol: beckon.v2"))
            try await raw.send(#"{"type":"hello","version":2,"cursor":0}"#)
            try await raw.waitFor(#""type":"welcome""#)
            _ = try await server.waitForPresence("phone") { $0.isConnected }

            try await raw.reset()
            let presence = try await server.waitForPresence("phone") { !$0.isConnected }
            #expect(presence.lastEnd == .dropped)
            try await events.waitFor {
                if case .disconnected(Self.phone, clean: false, _, _) = $0 { true } else { false }
            }
            #expect(await server.hub.sessionCount == 0)
        }
    }

    @Test func aPeerThatStopsAnsweringPingsIsDropped() async throws {
        // 3 s, not less: on a loaded machine the upgrade, `hello` and `welcome` alone took over
        // the 2 s that a 1 s interval allows before the first ping times out.
        try await SyncTestServer.with(configure: { $0.sync.pingInterval = .seconds(3) }) { server in
            let events = SyncEventLog(server.hub)
            let silent = try await SyncRawClient.open(port: server.port)
            #expect(try await silent.upgrade(credential: try await server.device(user: "alice", device: "phone"))
                .hasPrefix("HTTP/1.1 101"))
            try await silent.send(#"{"type":"hello","version":2,"cursor":0}"#)
            try await silent.waitFor(#""type":"welcome""#)
            // A real client answers pings (its WebSocket library does) and stays.
            let answering = try await server.connect(try await server.device(user: "bob", device: "tablet"))
            _ = try await answering.hello()

            // Pinged after 3 s, no pong by the next ping (6 s): closed, with 1001, as a drop.
            #expect(try await silent.closedByServer(within: .seconds(15)))
            #expect(try await silent.waitFor("ping timeout").contains("ping timeout"))
            let presence = try await server.waitForPresence("phone") { !$0.isConnected }
            #expect(presence.lastEnd == .dropped)
            try await events.waitFor {
                if case .disconnected(Self.phone, clean: false, _, _) = $0 { true } else { false }
            }
            try await Task.sleep(for: .seconds(3))
            try await answering.roundTrip()
            #expect(await server.presence("tablet")?.isConnected == true)
            try await answering.send(#"{"type":"bye"}"#)
            #expect(try await answering.closeCode() == 1000)
        }
    }

    @Test func refusedUpgradesAreAnsweredWithTheErrorBody() async throws {
        try await SyncTestServer.with { server in
            let raw = try await SyncRawClient.open(port: server.port)
            let answer = try await raw.upgrade(credential: "bkd_wrong")
            #expect(answer.hasPrefix("HTTP/1.1 401"))
            #expect(answer.lowercased().contains("www-authenticate: bearer"))
            let body = try await raw.waitFor("}}")
            #expect(body.contains(#""code":"unauthorized""#))
            #expect(try await raw.closedByServer(within: .seconds(5)))
        }
    }

    @Test func connectingTooOftenIs429BeforeTheUpgrade() async throws {
        try await SyncTestServer.with(configure: { $0.limits.syncConnectsPerMinute = 2 }) { server in
            let credential = try await server.device(user: "alice", device: "phone")
            for _ in 0..<2 {
                let client = try await server.connect(credential)
                _ = try await client.hello()
                try await client.send(#"{"type":"bye"}"#)
                _ = try await client.closeCode()
            }
            let raw = try await SyncRawClient.open(port: server.port)
            let answer = try await raw.upgrade(credential: credential)
            #expect(answer.hasPrefix("HTTP/1.1 429"))
            #expect(answer.lowercased().contains("retry-after: "))
            #expect(try await raw.waitFor("}}").contains(#""code":"rate_limited""#))
            // Per device: another device of the same user is not limited.
            let other = try await server.connect(try await server.device(user: "alice", device: "tablet"))
            _ = try await other.hello()
            try await other.send(#"{"type":"bye"}"#)
            _ = try await other.closeCode()
        }
    }

    @Test func theRateLimitCanBeTurnedOff() async throws {
        try await SyncTestServer.with(configure: { $0.limits.syncConnectsPerMinute = 0 }) { server in
            let credential = try await server.device(user: "alice", device: "phone")
            for _ in 0..<5 {
                let client = try await server.connect(credential)
                _ = try await client.hello()
                try await client.send(#"{"type":"bye"}"#)
                _ = try await client.closeCode()
            }
        }
    }

    @Test func sessionsAreCounted() async throws {
        let registry = PrometheusCollectorRegistry()
        try await SyncTestServer.with(metricsFactory: PrometheusMetricsFactory(registry: registry)) { server in
            let credential = try await server.device(user: "alice", device: "phone")
            try await server.post(to: ["alice"])
            try await server.post(to: ["alice"])
            let first = try await server.connect(credential)
            _ = try await first.hello(cursor: 0)
            #expect(try await first.messages(2) == [1, 2])
            try await first.send(#"{"type":"ack","upTo":2}"#)
            _ = try await server.waitForPresence("phone") { $0.lastAck == 2 }
            try await Self.waitForMetric(registry, "beckon_sync_sessions", 1)

            let second = try await server.connect(credential)
            _ = try await second.hello(cursor: 2)  // Replaces the first.
            #expect(try await first.closeCode() == 4001)
            try await second.send(#"{"type":"bye"}"#)
            #expect(try await second.closeCode() == 1000)

            try await Self.waitForMetric(registry, "beckon_sync_sessions", 0)
            try await Self.waitForMetric(registry, "beckon_sync_sessions_opened_total", 2)
            try await Self.waitForMetric(registry, #"beckon_sync_sessions_ended_total{end="replaced"}"#, 1)
            try await Self.waitForMetric(registry, #"beckon_sync_sessions_ended_total{end="clean"}"#, 1)
            try await Self.waitForMetric(registry, #"beckon_sync_sessions_ended_total{end="dropped"}"#, 0)
            try await Self.waitForMetric(registry, "beckon_sync_messages_sent_total", 2)
            // The ack of 2, then the hello cursor 2 of the second session.
            try await Self.waitForMetric(registry, "beckon_sync_acks_total", 2)
        }
    }

    /// Waits until the exported sample `name` (with its labels) has `value`.
    static func waitForMetric(_ registry: PrometheusCollectorRegistry, _ name: String, _ value: Double) async throws {
        let deadline = ContinuousClock.now + .seconds(5)
        var last: Double?
        while ContinuousClock.now < deadline {
            let text = String(decoding: registry.emitToBuffer(), as: UTF8.self)
            last = text.split(separator: "\n").lazy
                .filter { $0.hasPrefix(name + " ") }
                .compactMap { Double($0.split(separator: " ").last ?? "") }.first
            if last == value { return }
            try await Task.sleep(for: .milliseconds(5))
        }
        Issue.record("\(name) is \(String(describing: last)), expected \(value)")
    }
}
