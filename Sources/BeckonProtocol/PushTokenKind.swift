/// Which of a device's two APNs tokens: the remote-notification token
/// (`registerForRemoteNotifications`) or the PushKit VoIP token.
public enum PushTokenKind: String, Hashable, Sendable, Codable, CaseIterable {
    case remote
    case voip
}
