import APNSCore
import EmulatorTestSupport
import Foundation
import Testing

@testable import APNSEmulator

@Suite("Certificate-based authentication (mTLS, apns.md B.4)")
struct CertificateAuthenticationTests {
    @Test("A client certificate with UID=bundle id pushes without a JWT to base, .voip and .complication")
    func certificateConnection() async throws {
        let identity = try APNSEmulatorClientIdentity.generate(bundleID: "com.example.app")
        try await withEmulator(configure: { $0.trustedClientCAPEMs = [identity.caCertificatePEM] }) { emulator, key in
            let client = try await TestClient.connect(to: emulator, identity: identity)
            defer { Task { await client.close() } }
            // No `authorization` header at all; APNs ignores it on certificate connections (apns.md A.2).
            let ok = try await client.send(.push(token: tokenA, jwt: nil))
            #expect(ok.status == 200)
            // Certificate connections get the full stream limit at once; only token connections start at 1.
            #expect(try await client.maxConcurrentStreamsReceived == [1000])
            let voip = try await client.send(.push(token: tokenB, topic: "com.example.app.voip", jwt: nil, pushType: "voip"))
            #expect(voip.status == 200)
            #expect(emulator.device(token: tokenB)?.kind == .voip)
            // No apns-topic: the certificate's base topic (apns.md B.4).
            let defaulted = try await client.send(.push(token: tokenA, topic: nil, jwt: nil))
            #expect(defaulted.status == 200)
            #expect(emulator.deliveries(to: tokenA).last?.topic == "com.example.app")
            // Another app's topic, or an unknown suffix: BadTopic (pushy's rule, apns.md A.9 row 12e).
            #expect(try await client.send(.push(token: tokenA, topic: "com.example.other", jwt: nil)).reason == "BadTopic")
            #expect(try await client.send(.push(token: tokenA, topic: "com.example.app.widgets", jwt: nil)).reason == "BadTopic")
            // location is token-only (apns.md A.3).
            let location = try await client.send(
                .push(token: tokenA, topic: "com.example.app", jwt: nil, pushType: "location")
            )
            #expect(location.reason == "InvalidPushType")

            // Token clients keep working on the same emulator.
            let tokenClient = try await TestClient.connect(to: emulator)
            defer { Task { await tokenClient.close() } }
            #expect(try await tokenClient.send(.push(token: tokenA, jwt: key.token())).status == 200)
            #expect(try await tokenClient.send(.push(token: tokenA, jwt: nil)).reason == "MissingProviderToken")
        }
    }

    @Test("A certificate from an untrusted CA fails the handshake")
    func untrustedCertificate() async throws {
        let trusted = try APNSEmulatorClientIdentity.generate(bundleID: "com.example.app")
        let stranger = try APNSEmulatorClientIdentity.generate(bundleID: "com.example.app")
        try await withEmulator(configure: { $0.trustedClientCAPEMs = [trusted.caCertificatePEM] }) { emulator, _ in
            var refused = false
            do {
                let client = try await TestClient.connect(to: emulator, identity: stranger)
                let response = try await client.send(.push(token: tokenA, jwt: nil))
                refused = response.end == .closed
                await client.close()
            } catch {
                refused = true
            }
            #expect(refused)
            #expect(emulator.counters.requests == 0)
        }
    }
}
