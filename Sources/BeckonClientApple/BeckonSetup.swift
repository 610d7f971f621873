// Apple platforms: where the app's Beckon is and what its targets share. A translation, no
// decisions (docs/client-sdk.md).
#if canImport(Security)
import BeckonClient
import BeckonProtocol
import Foundation

/// Where your Beckon server is and what your app and its notification service extension share.
/// Build the same value in both targets; `BeckonApp(setup:…)`, `NotificationServiceHandler(setup:…)`
/// and `DeviceRegistrar(setup:…)` wire themselves from it (docs/client-sdk.md, "From an empty
/// Xcode project").
public struct BeckonSetup: Sendable {
    /// The server's base URL (`https://beckon.example.com`): the HTTP API, and sync over `wss`.
    public var server: URL
    /// The App Group both targets have: the shared store and the signals between processes.
    public var appGroup: String
    /// Where the device credential is kept: the keychain access group both targets share.
    public var credentials: KeychainCredentialStore
    /// Where the install's id is kept, beside the credential and as it is: readable from the first
    /// unlock, never restored onto another phone (a new install there registers anew).
    public var installationIDs: KeychainCredentialStore

    /// `keychainAccessGroup`: the group with its team prefix (`TEAMID.com.example.chat`), listed
    /// in both targets' Keychain Sharing capability.
    public init(server: URL, appGroup: String, keychainAccessGroup: String?) {
        self.server = server
        self.appGroup = appGroup
        self.credentials = KeychainCredentialStore(accessGroup: keychainAccessGroup)
        self.installationIDs = KeychainCredentialStore(accessGroup: keychainAccessGroup, account: "installation-id")
    }

    /// The sync WebSocket: the server's URL with `wss` for `https` (`ws` for `http`), at `/v1/sync`.
    /// The credential is read from `credentials` at each session.
    public var syncEndpoint: SyncEndpoint {
        var components = URLComponents(url: server, resolvingAgainstBaseURL: false) ?? URLComponents()
        components.scheme = components.scheme == "http" ? "ws" : "wss"
        let url = (components.url ?? server).appendingPathComponent("v1/sync")
        return SyncEndpoint(url: url, credential: "", subprotocol: SyncProtocol.subprotocol)
    }

    /// The APNs environment of this build's tokens, `"sandbox"` or `"production"`, from the
    /// embedded provisioning profile (apns.md B.2: it follows the profile, not Debug or Release).
    public static func apnsEnvironment() -> String {
        let url = Bundle.main.url(forResource: "embedded", withExtension: "mobileprovision")
        return ProvisioningProfile.apnsEnvironment(profile: url.flatMap { try? Data(contentsOf: $0) })
    }

    /// The store both targets share, in the App Group's container (`ClientStore.appGroup`).
    /// Throws only when the App Group is missing from the target's entitlements.
    public func store() throws -> ClientStore {
        try ClientStore.appGroup(appGroup)
    }
}
#endif
