/// Why the store refused a write.
public enum ClientStoreError: Error, Hashable, Sendable {
    /// The writer's lease was released or taken over: it must stop writing (and drop caches).
    case notLeaseHolder
}
