@testable import BeckonServer
import Configuration
import Crypto
import Foundation
import NIOCore
import NIOPosix
import NIOSSL
import Testing
import X509

@Suite struct ListenerTLSTests {
    @Test func listenerSpeaksTLSWhenACertificateIsConfigured() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("beckon-tls-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let (certificatePEM, keyPEM) = try Self.selfSigned()
        let chainPath = directory.appendingPathComponent("cert.pem").path
        let keyPath = directory.appendingPathComponent("key.pem").path
        try certificatePEM.write(toFile: chainPath, atomically: true, encoding: .utf8)
        try keyPEM.write(toFile: keyPath, atomically: true, encoding: .utf8)

        try await SyncTestServer.with(configure: {
            $0.http.tlsCertificateChainPath = chainPath
            $0.http.tlsPrivateKeyPath = keyPath
        }) { server in
            let answer = try await Self.get("/health", port: server.port, trusting: certificatePEM)
            #expect(answer.hasPrefix("HTTP/1.1 200"))
            #expect(answer.hasSuffix(#"{"status":"ok"}"#))
        }
    }

    @Test func halfATLSConfigurationIsRefused() {
        #expect(throws: BeckonConfigurationError.self) {
            try BeckonServerConfiguration(reading: ConfigReader(provider: InMemoryProvider(values: [
                "tls.certificate-chain-path": "/etc/beckon/cert.pem",
            ])))
        }
    }

    /// One HTTPS request over a fresh TLS connection that trusts only `certificatePEM`.
    static func get(_ path: String, port: Int, trusting certificatePEM: String) async throws -> String {
        var tls = TLSConfiguration.makeClientConfiguration()
        tls.trustRoots = .certificates([try NIOSSLCertificate(bytes: Array(certificatePEM.utf8), format: .pem)])
        let context = try NIOSSLContext(configuration: tls)
        let channel = try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .connect(host: "127.0.0.1", port: port) { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandler(try NIOSSLClientHandler(context: context, serverHostname: "localhost"))
                    return try NIOAsyncChannel<ByteBuffer, ByteBuffer>(wrappingChannelSynchronously: channel)
                }
            }
        return try await channel.executeThenClose { inbound, outbound in
            try await outbound.write(ByteBuffer(string: "GET \(path) HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n"))
            var answer = ""
            for try await chunk in inbound { answer += String(buffer: chunk) }
            return answer
        }
    }

    static func selfSigned() throws -> (certificate: String, key: String) {
        let key = P256.Signing.PrivateKey()
        let name = try DistinguishedName { CommonName("localhost") }
        let certificate = try Certificate(
            version: .v3, serialNumber: .init(), publicKey: .init(key.publicKey),
            notValidBefore: Date().addingTimeInterval(-3600), notValidAfter: Date().addingTimeInterval(3600),
            issuer: name, subject: name, signatureAlgorithm: .ecdsaWithSHA256,
            extensions: try .init {
                Critical(BasicConstraints.isCertificateAuthority(maxPathLength: nil))
                SubjectAlternativeNames([.dnsName("localhost")])
            },
            issuerPrivateKey: .init(key))
        return (try certificate.serializeAsPEM().pemString, key.pemRepresentation)
    }
}
