/// Where the device credential is kept between launches: `KeychainCredentialStore` on iOS
/// ("after first unlock, this device only", shared with the extension), memory in tests.
public protocol CredentialStore: CredentialSource {
    func save(_ credential: String) throws
    func delete() throws
}
