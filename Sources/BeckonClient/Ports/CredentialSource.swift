/// Where the device credential (`bkd_…`) is read from when a session opens: on iOS the shared
/// keychain (`KeychainCredentialStore`), which cannot be read before the first unlock after a
/// restart (apns.md E.9). A session that cannot read it does not open; nothing else fails.
public protocol CredentialSource: Sendable {
    func credential() throws -> String
}

/// A credential known up front (tests, the simulator, Linux).
public struct FixedCredential: CredentialSource {
    public var value: String

    public init(_ value: String) { self.value = value }

    public func credential() throws -> String { value }
}
