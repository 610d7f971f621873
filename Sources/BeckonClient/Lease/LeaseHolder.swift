import BeckonProtocol
import Foundation

/// One process's name in the lease row: its role and an id of its own, so two extension
/// instances (iOS may run several, docs/design.md "Share one store") are different holders, and
/// a relaunched app is a new holder whose arrival tells the others their caches are stale.
public struct LeaseHolder: Hashable, Sendable, CustomStringConvertible {
    public var role: SyncRole
    public var name: String

    public init(role: SyncRole, instance: String = UUID().uuidString.lowercased()) {
        self.role = role
        self.name = "\(role.rawValue):\(instance)"
    }

    /// The main app has priority over its extensions: it asks, they yield (seed 003's shared
    /// core: "the main app has priority").
    public var hasPriority: Bool { role == .app }

    public var description: String { name }
}
