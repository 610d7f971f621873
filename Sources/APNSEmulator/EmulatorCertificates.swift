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
        let caKey = P256.Signing.PrivateKey()
        let leafKey = P256.Signing.PrivateKey()
        let caName = try DistinguishedName {
            OrganizationName("Beckon")
            CommonName("Beckon APNs Emulator CA")
        }
        let leafName = try DistinguishedName {
            OrganizationName("Beckon")
            CommonName("localhost")
        }
        let notBefore = now.addingTimeInterval(-3600)
        let notAfter = now.addingTimeInterval(365 * 24 * 3600)
        let caPrivate = Certificate.PrivateKey(caKey)

        let ca = try Certificate(
            version: .v3,
            serialNumber: Certificate.SerialNumber(),
            publicKey: caPrivate.publicKey,
            notValidBefore: notBefore,
            notValidAfter: notAfter,
            issuer: caName,
            subject: caName,
            signatureAlgorithm: .ecdsaWithSHA256,
            extensions: try Certificate.Extensions {
                Critical(BasicConstraints.isCertificateAuthority(maxPathLength: 0))
                Critical(KeyUsage(keyCertSign: true, cRLSign: true))
                SubjectKeyIdentifier(hash: caPrivate.publicKey)
            },
            issuerPrivateKey: caPrivate
        )
        let leafPublic = Certificate.PrivateKey(leafKey).publicKey
        let leaf = try Certificate(
            version: .v3,
            serialNumber: Certificate.SerialNumber(),
            publicKey: leafPublic,
            notValidBefore: notBefore,
            notValidAfter: notAfter,
            issuer: caName,
            subject: leafName,
            signatureAlgorithm: .ecdsaWithSHA256,
            extensions: try Certificate.Extensions {
                Critical(BasicConstraints.notCertificateAuthority)
                Critical(KeyUsage(digitalSignature: true, keyEncipherment: true))
                try ExtendedKeyUsage([.serverAuth])
                SubjectAlternativeNames([
                    .dnsName("localhost"),
                    .ipAddress(.init(contentBytes: [127, 0, 0, 1])),
                ])
                AuthorityKeyIdentifier(keyIdentifier: SubjectKeyIdentifier(hash: caPrivate.publicKey).keyIdentifier)
            },
            issuerPrivateKey: caPrivate
        )
        return EmulatorCertificates(
            caCertificatePEM: try ca.serializeAsPEM().pemString,
            leafCertificatePEM: try leaf.serializeAsPEM().pemString,
            leafPrivateKeyPEM: leafKey.pemRepresentation
        )
    }
}
