/// What a take or renewal gave.
public struct LeaseGrant: Hashable, Sendable {
    public var generation: Int64
    /// The app asked for the lease: the holder should yield.
    public var preemptionRequested: Bool
}
