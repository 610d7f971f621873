import APNS
import BeckonStore
import Foundation
import Logging
import Metrics
import ServiceLifecycle

/// The delivery side of `beckon serve` as one service: the planner driver and the push
/// dispatcher over the APNs routes it is given.
public struct DeliveryService: Service {
    let driver: DeliveryDriver
    let clients: [APNSClient]
    let grace: Duration

    /// - Parameters:
    ///   - routes: each app's APNs route (`BeckonNode` picks Apple or the built-in emulator).
    ///   - clients: the APNs clients behind the routes, shut down when delivery stops.
    ///   - tick: how often due planner deadlines and the outbox are polled.
    ///   - presence: where the devices' sessions are (this node's hub, or every node's).
    public init(
        configuration: BeckonServerConfiguration, store: any BeckonStore, routes: [String: APNSRoute],
        clients: [APNSClient], tick: Duration = .seconds(1), metricsFactory: (any MetricsFactory)? = nil,
        presence: any DevicePresence
    ) {
        let factory = metricsFactory ?? MetricsSystem.factory
        let metrics = DeliveryMetrics(factory: factory)
        let dispatcher = PushDispatcher(
            store: store, routes: routes, metrics: metrics, logger: Logger(label: "beckon.push"),
            perAppConcurrency: configuration.sendsPerApp,
            retry: APNSRetryPolicy(
                maximumAttempts: configuration.dispatcherAttempts,
                backoff: APNSBackoff(
                    base: TimeInterval(configuration.dispatcherRetryBaseSeconds),
                    cap: TimeInterval(configuration.dispatcherRetryCapSeconds))),
            lease: TimeInterval(configuration.claimLeaseSeconds), idlePoll: tick)
        let driver = DeliveryDriver(
            store: store, policies: Dictionary(configuration.apps.map { ($0.id, $0.delivery) }, uniquingKeysWith: { $1 }),
            bundleIDs: Dictionary(configuration.apps.map { ($0.id, $0.bundleID) }, uniquingKeysWith: { $1 }),
            dispatcher: dispatcher, metrics: metrics, tick: tick, logger: Logger(label: "beckon.delivery"),
            presence: presence, deadlineLease: TimeInterval(configuration.deadlineLeaseSeconds))
        // Apple's final refusals go back to the planner: a failed push proves nothing about the app.
        dispatcher.onFinalFailure { [weak driver] device, pushID in
            driver?.submit(.pushFailed(device, pushID: pushID, at: Date()))
        }
        self.driver = driver
        self.clients = clients
        self.grace = .seconds(configuration.shutdownGraceSeconds)
    }

    /// What the API and the sync hub report, queued for the planner.
    public var events: DeliveryEventSink { DeliveryEventSink { [driver] in driver.submit($0) } }

    /// On graceful shutdown the planner finishes its events and the dispatcher its sends, but a
    /// send APNs never answers must not hold the process for the client's 30 s deadline:
    /// `shutdown.grace-seconds` after shutdown began here, the APNs clients are shut down, which
    /// fails what still waits. Those pushes are recorded to be tried again, and go out after the
    /// restart (found by scripts/apns-fault-soak.py).
    public func run() async throws {
        try await withThrowingTaskGroup(of: Bool.self) { group in
            group.addTask {
                try await driver.run()
                return true
            }
            group.addTask { [clients, grace] in
                try await gracefulShutdown()
                try await Task.sleep(for: grace)
                for client in clients { await client.shutdown() }
                return false
            }
            // Until the driver is done; the timer only cuts its sends short.
            while let driverDone = try await group.next(), !driverDone {}
            group.cancelAll()
        }
        for client in clients { await client.shutdown() }
    }
}
