import APNS
import APNSEmulator
import BeckonDelivery
import BeckonServer
import Crypto
import Logging
import Metrics
import NIOSSL

/// The APNs emulator `beckon serve` starts in process for the apps that have no Apple key, so a
/// fresh install shows the whole path without an Apple account.
struct BuiltInEmulator {
    let emulator: APNSEmulator
    let client: APNSClient
    let routes: [String: any PushSender]

    /// Starts the emulator with a key per app, made up now (it checks provider tokens as Apple
    /// does), and a client that trusts its certificate authority.
    static func start(
        apps: [AppDeclaration], configuration: BeckonServerConfiguration, metricsFactory: any MetricsFactory,
        logger: Logger
    ) async throws -> BuiltInEmulator {
        let keys = apps.map { app in
            (app, APNSSigningKey(teamID: app.teamID, keyID: keyID(for: app.id), privateKey: P256.Signing.PrivateKey()))
        }
        var emulated = APNSEmulatorConfiguration(
            authKeys: keys.map { APNSEmulatorAuthKey(keyID: $1.keyID, teamID: $1.teamID, publicKey: $1.privateKey.publicKey) },
            bundleIDs: apps.map(\.bundleID), environment: .sandbox, autoRegister: true)
        emulated.port = configuration.emulator.port
        let emulator = try APNSEmulator(configuration: emulated, logger: Logger(label: "beckon.apns-emulator"))
        try await emulator.start()
        let ca = try NIOSSLCertificate.fromPEMBytes(Array((emulator.caCertificatePEM ?? "").utf8))
        let client = APNSClient(
            configuration: .init(endpointOverride: ("127.0.0.1", emulator.port), additionalTrustRoots: ca),
            logger: Logger(label: "beckon.apns"), metricsFactory: metricsFactory)
        var routes: [String: any PushSender] = [:]
        for (app, key) in keys {
            routes[app.id] = APNSRoute(client: client, credential: .token(APNSProviderTokenSource(key: key)))
        }
        var metadata: Logger.Metadata = ["apps": "\(apps.map(\.id))", "emulator": "127.0.0.1:\(emulator.port)"]
        if let controlPort = configuration.emulator.controlPort {
            let control = try await emulator.startControl(port: controlPort)
            metadata["control"] = "http://127.0.0.1:\(control.port)"
        }
        logger.notice("no Apple key configured: pushes go to the built-in APNs emulator (sandbox)", metadata: metadata)
        return BuiltInEmulator(emulator: emulator, client: client, routes: routes)
    }

    /// Apple key ids are 10 characters; this one names the app so logs can tell them apart.
    static func keyID(for appID: String) -> String {
        let letters = appID.uppercased().filter { $0.isASCII && ($0.isLetter || $0.isNumber) }
        return String((letters + "EMULATORKEY").prefix(10))
    }
}
