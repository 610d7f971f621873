/// Where the device credential is kept between launches: `KeychainCredentialStore` on iOS
/// ("after first unlock, this device only", shared with the extension), memory in tests.
public protocol CredentialStore: CredentialSource {
    /// What is kept: nil when nothing is; throws when it cannot be read now (before the first
    /// unlock after a restart, apns.md E.9), which is not the same as nothing kept.
    func load() throws -> String?
    func save(_ credential: String) throws
    func delete() throws
}
