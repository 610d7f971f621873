import BeckonProtocol
import Foundation

/// One install of an app on one phone, as registered.
public struct Device: Hashable, Sendable, Codable {
    public var appID: String
    public var id: String
    public var userID: String
    public var bundleID: String
    public var environment: PushEnvironment
    /// Lowercase hex.
    public var pushToken: String?
    /// When the device last registered `pushToken`; APNs' 410 `timestamp` is compared with it.
    public var pushTokenRegisteredAt: Date?
    /// Lowercase hex.
    public var voipToken: String?
    public var voipTokenRegisteredAt: Date?
    public var capabilities: DeviceCapabilities
    public var locale: String?
    public var appVersion: String?
    /// Whether a sync credential is currently issued (its hash is stored, never shown).
    public var hasCredential: Bool
    /// Why APNs refuses this device's pushes until it registers again (`DeviceTokenNotForTopic`,
    /// `TopicDisallowed`), or nil.
    public var pushProblem: String?
    /// The key content pushes are sealed with for this device (`DeviceRegistration.contentKey`).
    public var contentKey: Data?
    public var createdAt: Date
    public var updatedAt: Date

    public init(
        appID: String,
        id: String,
        userID: String,
        bundleID: String,
        environment: PushEnvironment,
        pushToken: String? = nil,
        pushTokenRegisteredAt: Date? = nil,
        voipToken: String? = nil,
        voipTokenRegisteredAt: Date? = nil,
        capabilities: DeviceCapabilities = DeviceCapabilities(),
        locale: String? = nil,
        appVersion: String? = nil,
        hasCredential: Bool = false,
        pushProblem: String? = nil,
        contentKey: Data? = nil,
        createdAt: Date,
        updatedAt: Date
    ) {
        self.appID = appID
        self.id = id
        self.userID = userID
        self.bundleID = bundleID
        self.environment = environment
        self.pushToken = pushToken
        self.pushTokenRegisteredAt = pushTokenRegisteredAt
        self.voipToken = voipToken
        self.voipTokenRegisteredAt = voipTokenRegisteredAt
        self.capabilities = capabilities
        self.locale = locale
        self.appVersion = appVersion
        self.hasCredential = hasCredential
        self.pushProblem = pushProblem
        self.contentKey = contentKey
        self.createdAt = createdAt
        self.updatedAt = updatedAt
    }

    public var ref: DeviceRef { DeviceRef(appID: appID, deviceID: id) }
    public var user: UserRef { UserRef(appID: appID, userID: userID) }

    public func token(_ kind: PushTokenKind) -> String? {
        switch kind {
        case .remote: pushToken
        case .voip: voipToken
        }
    }

    public func tokenRegisteredAt(_ kind: PushTokenKind) -> Date? {
        switch kind {
        case .remote: pushTokenRegisteredAt
        case .voip: voipTokenRegisteredAt
        }
    }
}
