/// A nudge from one process of the app to another (Darwin notifications on iOS): the app asks
/// the extension to give up the lease. Only a nudge: the request itself is written in the lease
/// row, which the holder also reads at every renewal, so a lost signal costs one renewal
/// interval, not correctness (docs/design.md, "A lease, not a held file lock").
public protocol ProcessSignalPort: Sendable {
    func post(_ name: String)
    /// Every later `post` of `name`, from any process.
    func signals(named name: String) -> AsyncStream<Void>
}
