/// The API keys of an app's backends, as the operator manages them: issued, listed, revoked.
/// Checking a key a request presents is `CredentialVerifier`'s.
public protocol APIKeyRegistry: Sendable {
    /// Creates a key for a backend of `appID`. The secret is in the result and nowhere else:
    /// only its SHA-256 is stored.
    func createAPIKey(appID: String, name: String?) async throws -> IssuedAPIKey
    func apiKeys(appID: String) async throws -> [AppAPIKey]
    /// Returns false if no such key of that app exists or it was already revoked.
    func revokeAPIKey(appID: String, keyID: String) async throws -> Bool
}
