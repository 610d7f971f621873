import NIOConcurrencyHelpers

/// How many nodes share the rate limits: each node allows its share (`1/n`) of each configured
/// rate, so the cluster together stays within it (docs/cluster.md, "Limits"). One node: 1.
public final class NodeShare: Sendable {
    private let nodes = NIOLockedValueBox(1)

    public init() {}

    public var count: Int { nodes.withLockedValue { $0 } }

    func update(liveNodes: Int) { nodes.withLockedValue { $0 = max(1, liveNodes) } }
}
