import APNSCore
import BeckonStore
import Foundation
import Logging
import Metrics
import ServiceLifecycle

/// The delivery side of `beckon serve` as one service: the planner driver and the push
/// dispatcher over the senders it is given.
public struct DeliveryService: Service {
    /// The store's roles delivery uses: the dispatcher's and the driver's.
    public typealias Store = PushOutbox & DeviceDirectory & TokenFeedback & CallStore & ReadStateStore & MailboxStore
        & DeliveryStateStore & MessageTraceStore & DeliveryReports

    let driver: DeliveryDriver
    let cutOff: @Sendable () async -> Void
    let grace: Duration

    /// - Parameters:
    ///   - senders: each app's way to APNs (`BeckonNode` picks Apple or the built-in emulator).
    ///   - cutOff: stops the senders, failing what still waits for APNs: called `shutdownGrace`
    ///     after graceful shutdown began, and when delivery has stopped.
    ///   - tick: how often due planner deadlines and the outbox are polled.
    ///   - presence: where the devices' sessions are (this node's hub, or every node's).
    public init(
        configuration: DeliveryConfiguration, store: any Store, senders: [String: any PushSender],
        cutOff: @escaping @Sendable () async -> Void, tick: Duration = .seconds(1),
        metricsFactory: (any MetricsFactory)? = nil, presence: any DevicePresence
    ) {
        let factory = metricsFactory ?? MetricsSystem.factory
        let metrics = DeliveryMetrics(factory: factory)
        let dispatcher = PushDispatcher(
            store: store, senders: senders, metrics: metrics, logger: Logger(label: "beckon.push"),
            perAppConcurrency: configuration.sendsPerApp, retry: configuration.retry, lease: configuration.claimLease,
            idlePoll: tick)
        let driver = DeliveryDriver(
            store: store, policies: configuration.policies, bundleIDs: configuration.bundleIDs,
            dispatcher: dispatcher, metrics: metrics, tick: tick, logger: Logger(label: "beckon.delivery"),
            presence: presence, deadlineLease: configuration.deadlineLease, traceRetention: configuration.traceRetention)
        self.driver = driver
        self.cutOff = cutOff
        self.grace = configuration.shutdownGrace
    }

    /// What the API and the sync hub report, queued for the planner.
    public var events: DeliveryEventSink { DeliveryEventSink { [driver] in driver.submit($0) } }

    /// On graceful shutdown the planner finishes its events and the dispatcher its sends, but a
    /// send APNs never answers must not hold the process for the client's 30 s deadline:
    /// `shutdownGrace` after shutdown began here, the senders are cut off, which fails what
    /// still waits. Those pushes are recorded to be tried again, and go out after the restart.
    public func run() async throws {
        try await withThrowingTaskGroup(of: Bool.self) { group in
            group.addTask {
                try await driver.run()
                return true
            }
            group.addTask { [cutOff, grace] in
                try await gracefulShutdown()
                try await Task.sleep(for: grace)
                await cutOff()
                return false
            }
            // Until the driver is done; the timer only cuts its sends short.
            while let driverDone = try await group.next(), !driverDone {}
            group.cancelAll()
        }
        await cutOff()
    }
}
