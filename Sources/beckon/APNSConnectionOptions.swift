import APNS
import APNSCore
import ArgumentParser
import Foundation
import NIOSSL

/// The flags that say where APNs is and how to authenticate, shared by `push` and `bench apns`.
struct APNSConnectionOptions: ParsableArguments {
    @Option(help: "sandbox or production (Apple's hosts). Ignored when --host is given.")
    var environment: APNSEnvironment = .sandbox

    @Option(help: "Connect to this host instead of Apple's (e.g. the APNs emulator).")
    var host: String?

    @Option(help: "Port for --host.")
    var port: Int = 443

    @Option(name: .customLong("ca-file"), help: "A PEM CA certificate to trust, e.g. the emulator's.")
    var caFile: String?

    @Option(name: .customLong("team-id"), help: "Apple team id (token authentication).")
    var teamID: String?

    @Option(name: .customLong("key-id"), help: "Key id of the .p8 signing key (token authentication).")
    var keyID: String?

    @Option(name: .customLong("key-file"), help: "The .p8 signing key (token authentication).")
    var keyFile: String?

    @Option(name: .customLong("cert-file"), help: "Provider certificate, PEM (certificate authentication).")
    var certFile: String?

    @Option(name: .customLong("cert-key-file"), help: "The provider certificate's private key, PEM.")
    var certKeyFile: String?

    @Option(help: "HTTP/2 connections to open.")
    var connections: Int = 2

    func validate() throws {
        let token = [teamID, keyID, keyFile].compactMap { $0 }.count
        let certificate = [certFile, certKeyFile].compactMap { $0 }.count
        if token > 0 && certificate > 0 {
            throw ValidationError("use either --team-id/--key-id/--key-file or --cert-file/--cert-key-file, not both")
        }
        if token != 3 && certificate != 2 {
            throw ValidationError("give --team-id, --key-id and --key-file (token auth), or --cert-file and --cert-key-file")
        }
        if connections < 1 { throw ValidationError("--connections must be at least 1") }
        if !(1...65535).contains(port) { throw ValidationError("--port must be 1-65535") }
    }

    func credential() throws -> APNSCredential {
        if let teamID, let keyID, let keyFile {
            return .token(APNSProviderTokenSource(key: try APNSSigningKey(teamID: teamID, keyID: keyID, pemFile: keyFile)))
        }
        return try .certificate(certificateFile: certFile!, privateKeyFile: certKeyFile!)
    }

    func clientConfiguration(maximumQueued: Int = 10_000) throws -> APNSClientConfiguration {
        var configuration = APNSClientConfiguration(connectionsPerPool: connections, maximumQueuedRequests: maximumQueued)
        if let host { configuration.endpointOverride = (host, port) }
        if let caFile { configuration.additionalTrustRoots = try NIOSSLCertificate.fromPEMFile(caFile) }
        return configuration
    }
}

extension APNSEnvironment: ExpressibleByArgument {}
extension APNSPushType: ExpressibleByArgument {}
