/// Why the lease could not be taken.
public enum LeaseError: Error, Hashable, Sendable {
    /// The lease was not free within the time given.
    case timedOut
}
