import Foundation
import Prometheus
import Testing

@testable import BeckonServer

/// How `DeliveryDriver` takes its events: in batches, the next one read and planned while the one
/// before it saves.
@Suite struct DeliveryDriverTests {
    /// A batch planned during the previous batch's save waits for that save before it loads a
    /// device the two share. Otherwise it would plan from the state as it was before the save:
    /// its own save would then find the state moved, a conflict, and plan that device again. On
    /// one node no save should ever conflict, however fast the events for the same devices come.
    @Test func aBatchPlannedDuringThePreviousSaveWaitsForTheDevicesTheyShare() async throws {
        let registry = PrometheusCollectorRegistry()
        try await SyncTestServer.with(delivery: true, metricsFactory: PrometheusMetricsFactory(registry: registry)) { server in
            let users = (0..<20).map { "shared\($0)" }
            for (index, user) in users.enumerated() {
                _ = try await server.device(user: user, device: "\(user)-phone", token: String(repeating: String(format: "%02x", index), count: 32))
            }
            // Every message to every user: each batch shares all its devices with the one before.
            try await withThrowingTaskGroup(of: Void.self) { posters in
                for poster in 0..<8 {
                    posters.addTask {
                        for round in 0..<25 { try await server.post(to: users, text: "\(poster)-\(round)") }
                    }
                }
                try await posters.waitForAll()
            }
            // Batches save in order: once a later message's push is out, every batch before it is saved.
            let marker = String(repeating: "fa", count: 32)
            _ = try await server.device(user: "last", device: "last-phone", token: marker)
            try await server.post(to: ["last"])
            _ = try await server.pushes(to: marker, count: 1)
            #expect((PushDispatcherTests.metric(registry, "beckon_delivery_conflicts_total") ?? 0) == 0)
        }
    }
}
