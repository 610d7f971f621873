/// A nudge from one process of the app to another (Darwin notifications on iOS): the app asks
/// the extension to give up the lease. Only a nudge: the request itself is written in the lease
/// row, which the holder also reads at every renewal, so a lost signal costs one renewal
/// interval, not correctness (docs/design.md, "A lease, not a held file lock").
public protocol ProcessSignalPort: Sendable {
    func post(_ name: String)
    /// Every later `post` of `name`, from any process.
    func signals(named name: String) -> AsyncStream<Void>
}

/// Signals within one process: tests, and the simulator's app and extension sharing one address
/// space.
public final class LocalProcessSignal: ProcessSignalPort {
    private let observers = Locked<[String: [AsyncStream<Void>.Continuation]]>([:])

    public init() {}

    public func post(_ name: String) {
        for observer in observers.withLock({ $0[name] ?? [] }) { observer.yield() }
    }

    public func signals(named name: String) -> AsyncStream<Void> {
        let (stream, continuation) = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .bufferingNewest(1))
        observers.withLock { $0[name, default: []].append(continuation) }
        return stream
    }
}
