import Crypto
import Foundation
import X509

/// A P-256 CA made on the spot, valid for a year (an hour back, for clock skew), that issues the
/// emulator's server certificate and test client certificates.
struct ThrowawayCertificateAuthority {
    let name: DistinguishedName
    let certificate: Certificate
    private let key: Certificate.PrivateKey
    private let notBefore: Date
    private let notAfter: Date

    init(commonName: String, now: Date) throws {
        let key = Certificate.PrivateKey(P256.Signing.PrivateKey())
        let name = try DistinguishedName {
            OrganizationName("Beckon")
            CommonName(commonName)
        }
        let notBefore = now.addingTimeInterval(-3600)
        let notAfter = now.addingTimeInterval(365 * 24 * 3600)
        certificate = try Certificate(
            version: .v3, serialNumber: Certificate.SerialNumber(), publicKey: key.publicKey,
            notValidBefore: notBefore, notValidAfter: notAfter, issuer: name, subject: name,
            signatureAlgorithm: .ecdsaWithSHA256,
            extensions: try Certificate.Extensions {
                Critical(BasicConstraints.isCertificateAuthority(maxPathLength: 0))
                Critical(KeyUsage(keyCertSign: true, cRLSign: true))
                SubjectKeyIdentifier(hash: key.publicKey)
            },
            issuerPrivateKey: key
        )
        (self.key, self.name, self.notBefore, self.notAfter) = (key, name, notBefore, notAfter)
    }

    var pem: String { get throws { try certificate.serializeAsPEM().pemString } }

    /// Issues a leaf certificate for a new P-256 key; returns the certificate's and the key's PEM.
    func issue(subject: DistinguishedName, extensions: Certificate.Extensions) throws -> (certificate: String, key: String) {
        let leafKey = P256.Signing.PrivateKey()
        var all = extensions
        try all.append(Certificate.Extension(
            AuthorityKeyIdentifier(keyIdentifier: SubjectKeyIdentifier(hash: key.publicKey).keyIdentifier), critical: false))
        let leaf = try Certificate(
            version: .v3, serialNumber: Certificate.SerialNumber(), publicKey: Certificate.PrivateKey(leafKey).publicKey,
            notValidBefore: notBefore, notValidAfter: notAfter, issuer: name, subject: subject,
            signatureAlgorithm: .ecdsaWithSHA256, extensions: all, issuerPrivateKey: key
        )
        return (try leaf.serializeAsPEM().pemString, leafKey.pemRepresentation)
    }
}
