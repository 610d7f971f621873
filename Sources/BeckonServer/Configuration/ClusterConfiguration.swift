import Configuration

/// Several nodes on PostgreSQL (`cluster.*`, docs/cluster.md).
public struct ClusterConfiguration: Sendable, Equatable {
    /// `cluster.heartbeat-seconds`: how often a node says it is alive.
    public var heartbeatSeconds = 2
    /// `cluster.node-timeout-seconds`: how long after its last heartbeat a node is taken for dead
    /// (its sessions are ended for the planner, its devices reconnect elsewhere).
    public var nodeTimeoutSeconds = 10
    /// `cluster.poll-seconds`: how often a node checks the mailboxes of its sessions' users for
    /// messages whose wake-up hint was lost.
    public var pollSeconds = 2
    /// `cluster.hint-delay-ms`: how long hints are gathered before one NOTIFY carries them.
    public var hintDelayMilliseconds = 2

    public init() {}

    init(reading config: ConfigReader) throws(BeckonConfigurationError) {
        heartbeatSeconds = try config.positive("cluster.heartbeat-seconds", default: heartbeatSeconds)
        nodeTimeoutSeconds = try config.positive("cluster.node-timeout-seconds", default: nodeTimeoutSeconds)
        pollSeconds = try config.positive("cluster.poll-seconds", default: pollSeconds)
        hintDelayMilliseconds = try config.positive("cluster.hint-delay-ms", default: hintDelayMilliseconds)
        guard nodeTimeoutSeconds > 2 * heartbeatSeconds else {
            throw .invalid(key: "cluster.node-timeout-seconds", "must be more than twice cluster.heartbeat-seconds")
        }
    }
}
