import BeckonProtocol
import Foundation

/// A sync session as every node sees it (several nodes on PostgreSQL: the `sync_session` table):
/// which node holds it, for which device, role and user.
public struct ClusterSession: Hashable, Sendable {
    public var device: DeviceRef
    public var role: SyncRole
    public var userID: String
    public var node: String
    public var session: String

    public init(device: DeviceRef, role: SyncRole, userID: String, node: String, session: String) {
        self.device = device
        self.role = role
        self.userID = userID
        self.node = node
        self.session = session
    }
}
