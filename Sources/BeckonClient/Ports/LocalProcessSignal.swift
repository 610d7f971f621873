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
