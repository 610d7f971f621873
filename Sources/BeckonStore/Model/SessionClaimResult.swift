/// What claiming a device's slot for a new session decided, cluster-wide (docs/design.md, "Sync
/// roles"): an app session replaces the device's earlier app session and preempts its extension
/// session; an extension session replaces an earlier extension session and is refused while
/// the app holds the device.
public struct SessionClaimResult: Hashable, Sendable {
    public var accepted: Bool
    /// Sessions the claim took the slot from, to be closed where they are: with 4001 when of
    /// the same role, 4002 when an app session preempted an extension session.
    public var displaced: [ClusterSession]

    public init(accepted: Bool, displaced: [ClusterSession]) {
        self.accepted = accepted
        self.displaced = displaced
    }
}
