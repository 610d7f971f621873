import Foundation

/// An app the operator declared: one iOS app (bundle id) whose backend posts messages and whose
/// installs register as devices.
public struct App: Hashable, Sendable, Codable {
    /// The operator's name for the app; every other row is scoped by it.
    public var id: String
    /// The bundle id, which is also the APNs topic (`<bundle>.voip` for VoIP pushes).
    public var bundleID: String
    public var teamID: String
    /// The APNs auth key's id (10 characters), if the app pushes with a token-based key.
    public var apnsKeyID: String?
    /// Where the APNs key is (a file path or a secret's name). The key itself is never stored.
    public var apnsKeyReference: String?
    /// The APNs environments whose devices may register.
    public var environments: Set<PushEnvironment>
    /// The delivery planner's defaults for this app, as a JSON object. The store keeps it
    /// verbatim; the planner owns its schema.
    public var deliveryDefaults: Data
    public var limits: AppLimits
    public var createdAt: Date
    public var updatedAt: Date

    public init(
        id: String,
        bundleID: String,
        teamID: String,
        apnsKeyID: String? = nil,
        apnsKeyReference: String? = nil,
        environments: Set<PushEnvironment> = [.sandbox, .production],
        deliveryDefaults: Data = Data("{}".utf8),
        limits: AppLimits = AppLimits(),
        createdAt: Date = Date(timeIntervalSince1970: 0),
        updatedAt: Date = Date(timeIntervalSince1970: 0)
    ) {
        self.id = id
        self.bundleID = bundleID
        self.teamID = teamID
        self.apnsKeyID = apnsKeyID
        self.apnsKeyReference = apnsKeyReference
        self.environments = environments
        self.deliveryDefaults = deliveryDefaults
        self.limits = limits
        self.createdAt = createdAt
        self.updatedAt = updatedAt
    }
}
