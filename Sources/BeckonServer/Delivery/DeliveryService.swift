import APNS
import APNSCore
import APNSEmulator
import BeckonStore
import Crypto
import Foundation
import Logging
import Metrics
import NIOSSL
import ServiceLifecycle

/// The delivery side of `beckon serve` as one service: the planner driver, the push dispatcher,
/// the APNs clients, and — for apps with no Apple key configured — the built-in APNs emulator,
/// so a fresh install shows the whole path without an Apple account.
public struct DeliveryService: Service {
    let driver: DeliveryDriver
    let clients: [APNSClient]
    /// The in-process emulator, when an app has no Apple key (tests read its deliveries).
    public let emulator: APNSEmulator?

    /// Starts the emulator if needed and builds the clients; the service then runs the loops.
    ///
    /// - Parameters:
    ///   - tick: how often due planner deadlines and the outbox are polled.
    ///   - hub: this node's sync sessions, whose events the planner follows.
    ///   - perAppConcurrency: pushes in flight per app (the bulkhead between apps).
    public static func start(
        configuration: BeckonServerConfiguration, store: any BeckonStore, logger: Logger,
        tick: Duration = .seconds(1), perAppConcurrency: Int = 200, metricsFactory: (any MetricsFactory)? = nil,
        hub: SyncHub
    ) async throws -> DeliveryService {
        let factory = metricsFactory ?? MetricsSystem.factory
        var routes: [String: APNSRoute] = [:]
        var clients: [APNSClient] = []

        let withKeys = configuration.apps.filter { $0.apnsKeyPath != nil }
        if !withKeys.isEmpty {
            let apple = APNSClient(configuration: .init(), logger: Logger(label: "beckon.apns"), metricsFactory: factory)
            clients.append(apple)
            for app in withKeys {
                let key = try APNSSigningKey(teamID: app.teamID, keyID: app.apnsKeyID!, pemFile: app.apnsKeyPath!)
                routes[app.id] = APNSRoute(
                    client: apple, credential: .token(APNSProviderTokenSource(key: key)), bundleID: app.bundleID,
                    isEmulator: false)
            }
        }

        var emulator: APNSEmulator?
        let withoutKeys = configuration.apps.filter { $0.apnsKeyPath == nil }
        if !withoutKeys.isEmpty {
            // A key per app, made up now: the emulator checks provider tokens as Apple does.
            let keys = withoutKeys.map { app in
                (app, APNSSigningKey(teamID: app.teamID, keyID: Self.emulatorKeyID(for: app.id), privateKey: P256.Signing.PrivateKey()))
            }
            var emulated = APNSEmulatorConfiguration(
                authKeys: keys.map { APNSEmulatorAuthKey(keyID: $1.keyID, teamID: $1.teamID, publicKey: $1.privateKey.publicKey) },
                bundleIDs: withoutKeys.map(\.bundleID), environment: .sandbox, autoRegister: true)
            emulated.port = configuration.apnsEmulatorPort
            let started = try APNSEmulator(configuration: emulated, logger: Logger(label: "beckon.apns-emulator"))
            try await started.start()
            emulator = started
            let ca = try NIOSSLCertificate.fromPEMBytes(Array((started.caCertificatePEM ?? "").utf8))
            let client = APNSClient(
                configuration: .init(endpointOverride: ("127.0.0.1", started.port), additionalTrustRoots: ca),
                logger: Logger(label: "beckon.apns"), metricsFactory: factory)
            clients.append(client)
            for (app, key) in keys {
                routes[app.id] = APNSRoute(
                    client: client, credential: .token(APNSProviderTokenSource(key: key)), bundleID: app.bundleID,
                    isEmulator: true)
            }
            var metadata: Logger.Metadata = [
                "apps": "\(withoutKeys.map(\.id))", "emulator": "127.0.0.1:\(started.port)",
            ]
            if let controlPort = configuration.apnsEmulatorControlPort {
                let control = try await started.startControl(port: controlPort)
                metadata["control"] = "http://127.0.0.1:\(control.port)"
            }
            logger.notice("no Apple key configured: pushes go to the built-in APNs emulator (sandbox)", metadata: metadata)
        }

        let metrics = DeliveryMetrics(factory: factory)
        let dispatcher = PushDispatcher(
            store: store, routes: routes, metrics: metrics, logger: Logger(label: "beckon.push"),
            perAppConcurrency: perAppConcurrency, idlePoll: tick)
        let driver = DeliveryDriver(
            store: store, policies: Dictionary(configuration.apps.map { ($0.id, $0.delivery) }, uniquingKeysWith: { $1 }),
            dispatcher: dispatcher, metrics: metrics, tick: tick, logger: Logger(label: "beckon.delivery"),
            sessionSeen: { await hub.presence(of: $0) != nil })
        dispatcher.onFinalFailure { [weak driver] device, pushID in
            driver?.submit(.pushFailed(device, pushID: pushID, at: Date()))
        }
        return DeliveryService(driver: driver, clients: clients, emulator: emulator)
    }

    /// Apple key ids are 10 characters; this one names the app so logs can tell them apart.
    static func emulatorKeyID(for appID: String) -> String {
        let letters = appID.uppercased().filter { $0.isASCII && ($0.isLetter || $0.isNumber) }
        return String((letters + "EMULATORKEY").prefix(10))
    }

    func submit(_ event: DeliveryEvent) { driver.submit(event) }

    public func run() async throws {
        try await driver.run()
        for client in clients { await client.shutdown() }
        try await emulator?.shutdown()
    }
}
