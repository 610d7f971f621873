import BeckonClient

/// Whether protected data is readable on the simulated phone: not from a restart until the first
/// unlock (apns.md E.9). The app's and the extension's store open only when it is, and their
/// keychain reads fail until then.
final class PhoneProtectedData: Sendable {
    private let state = Locked(true)

    var isAvailable: Bool { state.withLock { $0 } }

    func set(_ available: Bool) { state.withLock { $0 = available } }

    /// The device credential as the keychain gives it ("after first unlock").
    func credentials(_ credential: String) -> any CredentialSource { PhoneKeychain(value: credential, protectedData: self) }
}

/// The keychain item holding the credential: unreadable before the first unlock.
private struct PhoneKeychain: CredentialSource {
    let value: String
    let protectedData: PhoneProtectedData

    struct Unreadable: Error {}

    func credential() throws -> String {
        guard protectedData.isAvailable else { throw Unreadable() }
        return value
    }
}
