import Crypto
import Foundation
import X509

/// A provider certificate for certificate-based authentication against the emulator (apns.md B.4),
/// with the throwaway CA that issued it: configure the emulator with
/// `trustedClientCAPEMs = [identity.caCertificatePEM]` and present `certificatePEM` and
/// `privateKeyPEM` in the TLS handshake.
///
/// Like pushy's mock server, the emulator reads the base topic from the subject's UID attribute;
/// the certificate may push to it, `<base>.voip` and `<base>.complication`.
public struct APNSEmulatorClientIdentity: Sendable {
    public var caCertificatePEM: String
    public var certificatePEM: String
    public var privateKeyPEM: String

    public static func generate(bundleID: String, now: Date = Date()) throws -> APNSEmulatorClientIdentity {
        let caKey = P256.Signing.PrivateKey()
        let caPrivate = Certificate.PrivateKey(caKey)
        let caName = try DistinguishedName {
            OrganizationName("Beckon")
            CommonName("Beckon APNs Emulator Client CA")
        }
        let ca = try Certificate(
            version: .v3, serialNumber: Certificate.SerialNumber(), publicKey: caPrivate.publicKey,
            notValidBefore: now.addingTimeInterval(-3600), notValidAfter: now.addingTimeInterval(365 * 24 * 3600),
            issuer: caName, subject: caName, signatureAlgorithm: .ecdsaWithSHA256,
            extensions: try Certificate.Extensions {
                Critical(BasicConstraints.isCertificateAuthority(maxPathLength: 0))
                Critical(KeyUsage(keyCertSign: true, cRLSign: true))
                SubjectKeyIdentifier(hash: caPrivate.publicKey)
            },
            issuerPrivateKey: caPrivate
        )
        let key = P256.Signing.PrivateKey()
        // Apple's subjects read "UID=<bundle id>, CN=Apple Push Services: <bundle id>, OU=<team>, ...".
        let subject = try DistinguishedName([
            RelativeDistinguishedName(.init(type: .init(arrayLiteral: 0, 9, 2342, 19_200_300, 100, 1, 1), utf8String: bundleID)),
            RelativeDistinguishedName(.init(type: .RDNAttributeType.commonName, utf8String: "Apple Push Services: \(bundleID)")),
        ])
        let certificate = try Certificate(
            version: .v3, serialNumber: Certificate.SerialNumber(),
            publicKey: Certificate.PrivateKey(key).publicKey,
            notValidBefore: now.addingTimeInterval(-3600), notValidAfter: now.addingTimeInterval(365 * 24 * 3600),
            issuer: caName, subject: subject, signatureAlgorithm: .ecdsaWithSHA256,
            extensions: try Certificate.Extensions {
                Critical(BasicConstraints.notCertificateAuthority)
                Critical(KeyUsage(digitalSignature: true))
                try ExtendedKeyUsage([.clientAuth])
                AuthorityKeyIdentifier(keyIdentifier: SubjectKeyIdentifier(hash: caPrivate.publicKey).keyIdentifier)
            },
            issuerPrivateKey: caPrivate
        )
        return APNSEmulatorClientIdentity(
            caCertificatePEM: try ca.serializeAsPEM().pemString,
            certificatePEM: try certificate.serializeAsPEM().pemString,
            privateKeyPEM: key.pemRepresentation
        )
    }
}
