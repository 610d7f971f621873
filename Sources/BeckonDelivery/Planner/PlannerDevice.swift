import BeckonSeal
import Foundation
import BeckonProtocol

/// The facts about one device that the planner needs, passed in with every event that may push.
///
/// Kept out of the persisted planner state on purpose: tokens and capabilities change with each
/// registration, and the content key is a secret that belongs in the device row, not in a
/// planner snapshot.
public struct PlannerDevice: Hashable, Sendable {
    /// The device has a remote-notification token (alerts and background pushes).
    public var hasRemoteToken: Bool
    /// The device has a PushKit VoIP token (calls only, rule 6).
    public var hasVoIPToken: Bool
    /// What the app on the device declared it can do; picks the effective strategy.
    public var capabilities: DeviceCapabilities
    /// A 32-byte AES-256-GCM key shared with the app's extension. When present, content pushes
    /// are sealed (rule 1: "content is encrypted per device if asked"); any other length is ignored.
    public var contentKey: Data?

    public init(
        hasRemoteToken: Bool, hasVoIPToken: Bool = false,
        capabilities: DeviceCapabilities = DeviceCapabilities(), contentKey: Data? = nil
    ) {
        self.hasRemoteToken = hasRemoteToken
        self.hasVoIPToken = hasVoIPToken
        self.capabilities = capabilities
        self.contentKey = contentKey
    }


    /// The key, if it is a usable AES-256 key.
    var sealingKey: Data? {
        guard let contentKey, contentKey.count == ContentSeal.keyByteCount else { return nil }
        return contentKey
    }
}
