import BeckonProtocol

/// A bounded sync from an extension (role `extension`), for the `filtering` strategy where the
/// extension syncs before it decides what to show (docs/design.md, "Delivery strategies").
/// It queues for the lease behind other extension instances, and yields to the app: when the
/// app asks for the lease, or the server closes the session with 4002 because the app
/// connected, the session stops, its last write is committed, and the lease goes
/// (docs/design.md, "Sync roles"; seed 003's shared core).
public struct ExtensionSync: Sendable {
    public enum Outcome: Hashable, Sendable {
        /// Everything the server had is stored.
        case caughtUp(newMessages: Int)
        /// The app took over first; what was stored so far stays.
        case preempted(newMessages: Int)
        /// No lease in time, the deadline passed, or the session failed.
        case incomplete(newMessages: Int)
    }

    let configuration: SyncSession.Configuration
    let store: ClientStore
    let lock: LeaseLock
    let transport: any SyncTransport
    let clock: any ClientClock
    let presenter: NotificationPresenter?
    let calls: CallCoordinator?
    /// Read at each run in place of the endpoint's credential, when set (the keychain may be
    /// unreadable before the first unlock, apns.md E.9).
    let credentials: (any CredentialSource)?

    public init(
        endpoint: SyncEndpoint, window: Int? = nil, store: ClientStore, lock: LeaseLock, transport: any SyncTransport,
        clock: any ClientClock, presenter: NotificationPresenter? = nil, calls: CallCoordinator? = nil,
        credentials: (any CredentialSource)? = nil
    ) {
        self.credentials = credentials
        self.configuration = SyncSession.Configuration(endpoint: endpoint, role: .extension, window: window)
        self.store = store
        self.lock = lock
        self.transport = transport
        self.clock = clock
        self.presenter = presenter
        self.calls = calls
    }

    /// Syncs until caught up, preempted, or `deadline`; waits at most `leaseWait` for its turn.
    public func run(leaseWait: Duration, deadline: Duration) async -> Outcome {
        var configuration = self.configuration
        if let credentials {
            guard let credential = try? credentials.credential() else { return .incomplete(newMessages: 0) }
            configuration.endpoint.credential = credential
        }
        let writer: LeaseGuard
        do {
            writer = try await lock.acquire(timeout: leaseWait)
        } catch {
            return .incomplete(newMessages: 0)
        }
        let session = SyncSession(
            configuration: configuration, store: store, writer: writer, transport: transport, clock: clock,
            presenter: presenter, calls: calls)
        let handler = await lock.onRevocation { _ in session.preempt() }
        let clock = self.clock
        let timer = Task {
            do { try await clock.sleep(for: deadline) } catch { return }
            session.stop()
        }
        await session.start()
        let caughtUp = await session.untilCaughtUp()
        timer.cancel()
        let reason = await session.stopAndWait()
        await lock.removeRevocationHandler(handler)
        await writer.release()
        let stored = await session.newMessageCount
        if reason == .preempted { return .preempted(newMessages: stored) }
        return caughtUp ? .caughtUp(newMessages: stored) : .incomplete(newMessages: stored)
    }
}
