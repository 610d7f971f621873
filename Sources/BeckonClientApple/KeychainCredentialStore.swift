// Apple platforms: the keychain. A translation, no decisions (docs/client-sdk.md).
#if canImport(Security)
import BeckonClient
import Foundation
import Security

/// The device credential (`bkd_…`) in the keychain, in an access group the app and its
/// extensions share. Stored "after first unlock, this device only": readable in the background
/// while the phone is locked, from the first unlock after a restart on — the default, "when
/// unlocked", would hide it from a push handled on a locked phone — and never restored onto
/// another device, whose own registration it is not (apns.md E.9).
public struct KeychainCredentialStore: CredentialStore {
    /// The keychain access group the app and its extension share (with the team prefix).
    public var accessGroup: String?
    /// The item's service.
    public var service: String
    /// The item's account.
    public var account: String

    /// The credential in `accessGroup`; the defaults name one item per app.
    public init(accessGroup: String?, service: String = "beckon", account: String = "device-credential") {
        self.accessGroup = accessGroup
        self.service = service
        self.account = account
    }

    /// Throws `KeychainError.notFound` before `save`, `.unavailable` before the first unlock.
    public func credential() throws -> String {
        var query = item
        query[kSecReturnData as String] = true
        query[kSecMatchLimit as String] = kSecMatchLimitOne
        var result: CFTypeRef?
        let status = SecItemCopyMatching(query as CFDictionary, &result)
        guard status == errSecSuccess, let data = result as? Data else { throw KeychainError(status) }
        return String(decoding: data, as: UTF8.self)
    }

    /// The credential, nil when none is kept; throws `.unavailable` before the first unlock.
    public func load() throws -> String? {
        do { return try credential() } catch KeychainError.notFound { return nil }
    }

    /// Keeps the credential the server issued, replacing one kept before.
    public func save(_ credential: String) throws {
        var attributes = item
        attributes[kSecValueData as String] = Data(credential.utf8)
        attributes[kSecAttrAccessible as String] = kSecAttrAccessibleAfterFirstUnlockThisDeviceOnly
        var status = SecItemAdd(attributes as CFDictionary, nil)
        if status == errSecDuplicateItem {
            let update: [String: Any] = [
                kSecValueData as String: Data(credential.utf8),
                kSecAttrAccessible as String: kSecAttrAccessibleAfterFirstUnlockThisDeviceOnly,
            ]
            status = SecItemUpdate(item as CFDictionary, update as CFDictionary)
        }
        guard status == errSecSuccess else { throw KeychainError(status) }
    }

    /// Forgets the credential (at sign-out); deleting none is not an error.
    public func delete() throws {
        let status = SecItemDelete(item as CFDictionary)
        guard status == errSecSuccess || status == errSecItemNotFound else { throw KeychainError(status) }
    }

    private var item: [String: Any] {
        var item: [String: Any] = [
            kSecClass as String: kSecClassGenericPassword, kSecAttrService as String: service, kSecAttrAccount as String: account,
        ]
        if let accessGroup { item[kSecAttrAccessGroup as String] = accessGroup }
        return item
    }
}

/// A keychain failure: no credential kept yet, or the keychain's own status.
public enum KeychainError: Error, Hashable, Sendable {
    case notFound
    /// `errSecInteractionNotAllowed`: the device has not been unlocked since it started.
    case unavailable
    case status(Int32)

    init(_ status: OSStatus) {
        switch status {
        case errSecItemNotFound: self = .notFound
        case errSecInteractionNotAllowed: self = .unavailable
        default: self = .status(status)
        }
    }
}
#endif
