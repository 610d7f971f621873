/// What a take or renewal gave.
package struct LeaseGrant: Hashable, Sendable {
    package var generation: Int64
    /// The app asked for the lease: the holder should yield.
    package var preemptionRequested: Bool
}
