import NIOSSL

/// How a pool authenticates to APNs (apns.md B): a provider token from a signing key, or a
/// provider certificate presented in the TLS handshake.
public enum APNSCredential: Sendable {
    case token(APNSProviderTokenSource)
    /// `name` tells pools apart (each certificate gets its own connections); use e.g. the bundle id.
    case certificate(name: String, chain: [NIOSSLCertificate], privateKey: NIOSSLPrivateKey)

    /// Loads a PEM certificate chain and its PEM private key.
    public static func certificate(certificateFile: String, privateKeyFile: String) throws -> APNSCredential {
        .certificate(
            name: certificateFile,
            chain: try NIOSSLCertificate.fromPEMFile(certificateFile),
            privateKey: try NIOSSLPrivateKey(file: privateKeyFile, format: .pem)
        )
    }

    /// What tells credentials apart: each gets its own connections (one team per connection, apns.md B.2).
    enum Identity: Hashable {
        case token(ObjectIdentifier)
        case certificate(String)
    }

    var identity: Identity {
        switch self {
        case .token(let source): .token(ObjectIdentifier(source))
        case .certificate(let name, _, _): .certificate(name)
        }
    }

    /// A stable name for metrics and logs (team and key for tokens; never the secret).
    public var label: String {
        switch self {
        case .token(let source): "\(source.key.teamID)/\(source.key.keyID)"
        case .certificate(let name, _, _): "certificate:\(name)"
        }
    }
}
