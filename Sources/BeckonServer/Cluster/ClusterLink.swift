import BeckonStore
import Foundation
import NIOConcurrencyHelpers

/// What the sync hub needs from the other nodes (several nodes on one PostgreSQL): to tell them
/// what happened here, and to take a device's session slot cluster-wide. One node has none.
public protocol ClusterLink: Sendable {
    /// This node's id, unique per process start.
    var nodeID: String { get }
    /// Queues a hint for the other nodes; never blocks (sent shortly after, in a batch).
    func publish(_ hint: ClusterHint)
    /// Takes the device's slot for a new session (`PostgresStore.claimSession`).
    func claim(_ session: ClusterSession, at date: Date) async -> SessionClaimResult
    /// Gives the slot up: the session ended.
    func release(_ device: DeviceRef, session: String) async
}

/// How many nodes share the rate limits: each node allows its share (`1/n`) of each configured
/// rate, so the cluster together stays within it (docs/cluster.md, "Limits"). One node: 1.
public final class NodeShare: Sendable {
    private let nodes = NIOLockedValueBox(1)

    public init() {}

    public var count: Int { nodes.withLockedValue { $0 } }

    func update(liveNodes: Int) { nodes.withLockedValue { $0 = max(1, liveNodes) } }
}
