/// Who presents a secret: a backend with an API key, or a device with its sync credential.
/// Reads only, so that authenticating a request needs nothing that can change the store.
public protocol CredentialVerifier: Sendable {
    /// The key a backend presented, if it is known and not revoked. The key carries its app id,
    /// which is the only app it reaches.
    func authenticateAPIKey(_ presented: String) async throws -> AppAPIKey?
    /// The device a credential belongs to, if the credential is current.
    func authenticateDevice(credential: String) async throws -> Device?
}
