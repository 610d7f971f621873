import APNS
import APNSCore
import APNSEmulator
import CoreMetrics
import EmulatorTestSupport
import Foundation
import NIOSSL

/// One emulator and one client that trusts it, for a test's lifetime.
struct EmulatorHarness {
    let emulator: APNSEmulator
    let client: APNSClient
    let source: APNSProviderTokenSource
    var credential: APNSCredential { .token(source) }

    static let teamID = "TEAM123456"
    static let keyID = "KEY1234567"
    static let bundleID = "com.example.app"

    /// Runs `body` against a fresh emulator (any topic allowed, tokens registered on first use).
    static func run<Result>(
        emulatorClock: TestClock? = nil,
        clientClock: TestClock? = nil,
        configureEmulator: (inout APNSEmulatorConfiguration) -> Void = { _ in },
        configureClient: (inout APNSClientConfiguration) -> Void = { _ in },
        metrics: (any MetricsFactory)? = nil,
        _ body: (EmulatorHarness) async throws -> Result
    ) async throws -> Result {
        try await withEmulator(
            key: TestKey(keyID: keyID, teamID: teamID), bundleIDs: [], clock: emulatorClock, configure: configureEmulator
        ) { emulator, key in
            var clientConfiguration = APNSClientConfiguration(
                endpointOverride: ("127.0.0.1", emulator.port),
                additionalTrustRoots: [try NIOSSLCertificate(bytes: Array(emulator.caCertificatePEM!.utf8), format: .pem)],
                connectionsPerPool: 1,
                retry: APNSRetryPolicy(maximumAttempts: 4, backoff: APNSBackoff(base: 0.01, cap: 0.05)),
                reconnectBackoff: APNSBackoff(base: 0.01, cap: 0.05)
            )
            configureClient(&clientConfiguration)
            let client = APNSClient(configuration: clientConfiguration, metricsFactory: metrics)
            // Without an injected clock the client's stands still at the test's start: tokens are
            // minted once, which is all a test of a few seconds needs.
            let clock = clientClock ?? TestClock()
            let signingKey = APNSSigningKey(teamID: teamID, keyID: keyID, privateKey: key.privateKey)
            let source = APNSProviderTokenSource(key: signingKey, now: clock.function)
            let harness = EmulatorHarness(emulator: emulator, client: client, source: source)
            do {
                let result = try await body(harness)
                await client.shutdown()
                return result
            } catch {
                await client.shutdown()
                throw error
            }
        }
    }

    /// A random, well-formed device token.
    static func newToken() -> APNSDeviceToken {
        try! APNSDeviceToken(bytes: (0..<32).map { _ in UInt8.random(in: 0...255) })
    }

    func send<N: APNSNotification>(
        _ notification: N, to token: APNSDeviceToken = EmulatorHarness.newToken(), deadline: TimeInterval? = nil
    ) async throws -> APNSResponse {
        try await client.send(notification, to: token, bundleID: Self.bundleID, environment: .sandbox, credential: credential, deadline: deadline)
    }

    /// Sends `count` alerts at once and returns their answers.
    func sendConcurrently(_ count: Int) async throws -> [APNSResponse] {
        try await withThrowingTaskGroup(of: APNSResponse.self) { group in
            for index in 0..<count {
                group.addTask { try await self.send(APNSAlertNotification(alert: .init(body: "message \(index)"))) }
            }
            var responses: [APNSResponse] = []
            for try await response in group { responses.append(response) }
            return responses
        }
    }
}
