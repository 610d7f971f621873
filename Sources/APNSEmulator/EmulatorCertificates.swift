import Crypto
import Foundation
import X509

/// A throwaway CA and a server certificate it signed, for `localhost` and 127.0.0.1.
///
/// Real APNs chains to USERTrust (apns.md A.1, G.14); clients must be able to trust a custom root,
/// and this is the root they trust in tests.
struct EmulatorCertificates: Sendable {
    var caCertificatePEM: String
    var leafCertificatePEM: String
    var leafPrivateKeyPEM: String

    static func generate(now: Date = Date()) throws -> EmulatorCertificates {
        let ca = try ThrowawayCertificateAuthority(commonName: "Beckon APNs Emulator CA", now: now)
        let leaf = try ca.issue(
            subject: try DistinguishedName {
                OrganizationName("Beckon")
                CommonName("localhost")
            },
            extensions: try Certificate.Extensions {
                Critical(BasicConstraints.notCertificateAuthority)
                Critical(KeyUsage(digitalSignature: true, keyEncipherment: true))
                try ExtendedKeyUsage([.serverAuth])
                SubjectAlternativeNames([
                    .dnsName("localhost"),
                    .ipAddress(.init(contentBytes: [127, 0, 0, 1])),
                ])
            }
        )
        return EmulatorCertificates(caCertificatePEM: try ca.pem, leafCertificatePEM: leaf.certificate, leafPrivateKeyPEM: leaf.key)
    }
}
