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
        let ca = try ThrowawayCertificateAuthority(commonName: "Beckon APNs Emulator Client CA", now: now)
        // Apple's subjects read "UID=<bundle id>, CN=Apple Push Services: <bundle id>, OU=<team>, ...".
        let subject = try DistinguishedName([
            RelativeDistinguishedName(.init(type: .init(arrayLiteral: 0, 9, 2342, 19_200_300, 100, 1, 1), utf8String: bundleID)),
            RelativeDistinguishedName(.init(type: .RDNAttributeType.commonName, utf8String: "Apple Push Services: \(bundleID)")),
        ])
        let leaf = try ca.issue(
            subject: subject,
            extensions: try Certificate.Extensions {
                Critical(BasicConstraints.notCertificateAuthority)
                Critical(KeyUsage(digitalSignature: true))
                try ExtendedKeyUsage([.clientAuth])
            }
        )
        return APNSEmulatorClientIdentity(caCertificatePEM: try ca.pem, certificatePEM: leaf.certificate, privateKeyPEM: leaf.key)
    }
}
