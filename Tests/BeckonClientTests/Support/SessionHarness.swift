import BeckonClient
import BeckonClientTestSupport
import BeckonProtocol
import Foundation

/// A sync session over a scripted socket, a temporary store, a fake notification centre and
/// CallKit, on a manual clock.
struct SessionHarness {
    let test: TestStore
    let clock: ManualClock
    let store: ClientStore
    let lock: LeaseLock
    let writer: LeaseGuard
    let center: FakeNotificationCenter
    let reporter: FakeCallReporter
    let presenter: NotificationPresenter
    let calls: CallCoordinator
    let transport: ScriptedTransport
    let session: SyncSession

    static let endpoint = SyncEndpoint(
        url: URL(string: "ws://127.0.0.1:1/v1/sync")!, credential: "bkd_test", subprotocol: SyncProtocol.subprotocol)

    static func make(role: SyncRole = .app, window: Int? = nil) async throws -> SessionHarness {
        let test = try TestStore()
        let clock = ManualClock()
        let store = try test.open(clock: clock)
        let lock = LeaseLock(store: store, holder: LeaseHolder(role: role), clock: clock)
        let writer = try await lock.acquire(timeout: .seconds(1))
        let center = FakeNotificationCenter()
        let reporter = FakeCallReporter()
        let presenter = NotificationPresenter(store: store, center: center, role: role, clock: clock)
        let calls = CallCoordinator(store: store, reporter: reporter)
        let transport = ScriptedTransport()
        let session = SyncSession(
            configuration: SyncSession.Configuration(endpoint: endpoint, role: role, window: window),
            store: store, writer: writer, transport: transport, clock: clock, presenter: presenter, calls: calls,
            jitter: JitterSource(seed: 42))
        return SessionHarness(
            test: test, clock: clock, store: store, lock: lock, writer: writer, center: center, reporter: reporter,
            presenter: presenter, calls: calls, transport: transport, session: session)
    }

    /// Starts the session and answers its hello with `welcome`.
    func connect(_ index: Int = 0, lastSequence: Int64, badge: Int = 0) async throws -> ScriptedConnection {
        if index == 0 { await session.start() }
        let connection = try await transport.connection(index)
        try await connection.waitForSent("hello") { if case .hello = $0 { true } else { false } }
        connection.welcome(lastSequence: lastSequence, badge: badge)
        return connection
    }

    func finish() async {
        await session.stopAndWaitOrGiveUp()
        await writer.release()
        test.remove()
    }
}

extension SyncSession {
    /// Stops if still running, without waiting on a server that is gone.
    func stopAndWaitOrGiveUp() async {
        if stopReason == nil { preempt() }
        _ = await untilStopped()
    }
}
