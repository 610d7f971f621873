import BeckonProtocol
import Foundation

/// A device's claimed sync session as the planner needs it (`DevicePresence.liveSessions`): its
/// role, and when it connected (a wake is measured to then, not to when the planner learns of it).
public struct LiveSession: Hashable, Sendable {
    public var role: SyncRole
    public var since: Date

    public init(role: SyncRole, since: Date) {
        self.role = role
        self.since = since
    }
}
