import BeckonClient
import BeckonClientNIO
import BeckonClientTestSupport
import BeckonProtocol
import Foundation

/// One simulated install of the app: its own store file, the real SDK core, a real WebSocket on
/// loopback, fake notification centre and CallKit, the system clock.
final class ClientTestDevice: Sendable {
    let test: TestStore
    let store: ClientStore
    let lock: LeaseLock
    let center = FakeNotificationCenter()
    let reporter = FakeCallReporter()
    let presenter: NotificationPresenter
    let calls: CallCoordinator
    let endpoint: SyncEndpoint
    let credential: String
    let server: ClientTestServer
    let clock = SystemClock()

    init(server: ClientTestServer, user: String, device: String, role: SyncRole = .app, sharing other: ClientTestDevice? = nil) async throws {
        self.server = server
        if let other { self.test = other.test } else { self.test = try TestStore() }
        self.store = try test.open(clock: clock)
        self.lock = LeaseLock(store: store, holder: LeaseHolder(role: role), clock: clock)
        self.credential = if let other { other.credential } else { try await server.device(user: user, device: device) }
        self.endpoint = server.endpoint(credential)
        self.presenter = NotificationPresenter(
            store: store, center: center, role: role, clock: clock,
            renderer: { NotificationContent(body: $0.payload?["text"]?.stringValue) })
        self.calls = CallCoordinator(store: store, reporter: reporter)
    }

    /// A session over a real WebSocket; quick retries, so reconnect tests take little time.
    func session(writer: LeaseGuard, role: SyncRole = .app, transport: (any SyncTransport)? = nil) -> SyncSession {
        SyncSession(
            configuration: SyncSession.Configuration(
                endpoint: endpoint, role: role, backoff: ReconnectBackoff(base: .milliseconds(50), maximum: .milliseconds(200))),
            store: store, writer: writer, transport: transport ?? NIOSyncTransport(), clock: clock, presenter: presenter,
            calls: calls)
    }

    /// Connects, catches up, and says bye.
    func syncOnce() async throws -> Int {
        let writer = try await lock.acquire(timeout: .seconds(10))
        let session = session(writer: writer)
        await session.start()
        guard await session.untilCaughtUp() else { throw TimedOut(what: "a catch-up") }
        await session.stopAndWait()
        await writer.release()
        return await session.newMessageCount
    }

    var fetcher: URLSessionMessageFetcher { URLSessionMessageFetcher(baseURL: server.baseURL, credential: credential) }

    func remove() { test.remove() }
}
