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
