import BeckonProtocol
import Foundation

/// What a device says about itself when it registers or updates its registration.
///
/// A registration replaces the previous one of the same (app, device id) as a whole:
/// - A token present in it counts as registered now, even if it is the same token as before.
///   Apple's 410 rule depends on this: a token APNs called dead stays usable if the device
///   registers it again after APNs' `timestamp` (docs/apns.md E.7, "410 race").
/// - A token absent from it is removed (the user turned notifications off, or no PushKit).
/// - A token registered here is taken away from any other device of the app that held it, so
///   one install is never pushed twice (a reinstall can bring a new device id with an old token).
/// - If the user changes (sign-out, sign-in as someone else), the device's cursor restarts at 0
///   for the new user's mailbox and its sync credential is revoked: the caller issues a new one.
public struct DeviceRegistration: Hashable, Sendable, Codable {
    public var appID: String
    public var deviceID: String
    public var userID: String
    public var bundleID: String
    public var environment: PushEnvironment
    /// The remote-notification token as hex (any case; stored lowercase).
    public var pushToken: String?
    /// When the caller says the token was registered, if before now: a drop-in's device is
    /// registered when Beckon first sees it, but its token was set earlier (a Matrix pusher's
    /// `pushkey_ts`), and APNs' 410 timestamp is compared with that moment (rule 8). Nil, or a
    /// time in the future, is now; native devices leave it nil.
    public var pushTokenRegisteredAt: Date?
    /// The PushKit VoIP token as hex.
    public var voipToken: String?
    public var capabilities: DeviceCapabilities
    /// BCP 47, e.g. `fr-CA`; alert texts are chosen with it.
    public var locale: String?
    public var appVersion: String?
    /// A 32-byte AES-256 key the app chose for content pushes sealed to its extension (the
    /// `content` strategy); nil for none. Kept as given, never shown back.
    public var contentKey: Data?

    public init(
        appID: String,
        deviceID: String,
        userID: String,
        bundleID: String,
        environment: PushEnvironment,
        pushToken: String? = nil,
        pushTokenRegisteredAt: Date? = nil,
        voipToken: String? = nil,
        capabilities: DeviceCapabilities = DeviceCapabilities(),
        locale: String? = nil,
        appVersion: String? = nil,
        contentKey: Data? = nil
    ) {
        self.appID = appID
        self.deviceID = deviceID
        self.userID = userID
        self.bundleID = bundleID
        self.environment = environment
        self.pushToken = pushToken
        self.pushTokenRegisteredAt = pushTokenRegisteredAt
        self.voipToken = voipToken
        self.capabilities = capabilities
        self.locale = locale
        self.appVersion = appVersion
        self.contentKey = contentKey
    }

    public var ref: DeviceRef { DeviceRef(appID: appID, deviceID: deviceID) }
}
