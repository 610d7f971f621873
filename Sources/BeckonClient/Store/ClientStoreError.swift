/// Why the store refused a read or a write.
public enum ClientStoreError: Error, Hashable, Sendable {
    /// The file cannot be opened yet (before the first unlock after a restart, apns.md E.9):
    /// nothing is lost, the next use tries again.
    case unavailable(String)
    /// The writer's lease was released or taken over: it must stop writing (and drop caches).
    case notLeaseHolder
}
