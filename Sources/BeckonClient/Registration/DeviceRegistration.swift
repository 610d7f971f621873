import BeckonProtocol
import Foundation

/// What the server is told about this install (`POST /v1/devices`, docs/client-sdk.md step 4).
/// The tokens are not here: `DeviceRegistrar` sends the newest iOS gave it.
public struct DeviceRegistration: Hashable, Sendable {
    /// Stable for the install. Empty: the registrar mints a UUID at its first registration and
    /// keeps it in its `installationIDs` store (`DeviceRegistrar(setup:…)` does so).
    public var deviceID: String
    /// The app's bundle id: the APNs topic.
    public var bundleID: String
    /// `sandbox` for a development build, `production` for TestFlight and the App Store: the APNs
    /// environment the app's tokens belong to (apns.md A.1).
    public var environment: String
    /// What the server may rely on: the extension, the background modes (step 3's table).
    public var capabilities: DeviceCapabilities
    /// The user's language, for the server's generic alert texts.
    public var locale: String?
    /// The app's version, for the operator.
    public var appVersion: String?
    /// 32 random bytes the extension also holds, if the `content` strategy seals for this device.
    public var contentKey: Data?

    /// `environment`: "sandbox" or "production", where the tokens come from.
    public init(
        deviceID: String, bundleID: String, environment: String, capabilities: DeviceCapabilities,
        locale: String? = nil, appVersion: String? = nil, contentKey: Data? = nil
    ) {
        self.deviceID = deviceID
        self.bundleID = bundleID
        self.environment = environment
        self.capabilities = capabilities
        self.locale = locale
        self.appVersion = appVersion
        self.contentKey = contentKey
    }
}
