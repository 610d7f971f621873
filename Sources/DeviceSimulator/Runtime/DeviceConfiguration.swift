import BeckonClient
import Foundation

/// One simulated phone: its app, its iOS, and where its SDK connects.
public struct DeviceConfiguration: Sendable {
    public var name: String
    public var traits: AppTraits
    public var policy: IOSPolicy
    public var seed: UInt64
    /// `ws://host:port/v1/sync`.
    public var syncURL: URL
    /// `http://host:port` (the extension's fetch by id).
    public var baseURL: URL
    /// The device credential from registration.
    public var credential: String
    /// The SQLite file the app and its extension share.
    public var storePath: String
    /// The device's content key (sealed pushes), if any.
    public var sealKey: Data?
    /// The app/extension lease's timings, as multiples of a phone's (500 ms lease renewed every
    /// 50 ms). A fleet slows them: a thousand apps in front would otherwise renew twenty
    /// thousand times a second on one machine, and the fleet would measure that.
    public var leaseTimingFactor: Double = 1

    public init(
        name: String, traits: AppTraits, policy: IOSPolicy, seed: UInt64, syncURL: URL, baseURL: URL,
        credential: String, storePath: String, sealKey: Data? = nil
    ) {
        self.name = name
        self.traits = traits
        self.policy = policy
        self.seed = seed
        self.syncURL = syncURL
        self.baseURL = baseURL
        self.credential = credential
        self.storePath = storePath
        self.sealKey = sealKey
    }
}
