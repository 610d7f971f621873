import BeckonClient
import BeckonClientTestSupport
import BeckonJSON
import BeckonProtocol
import Foundation

/// `BeckonApp` over fakes of every port, on a manual clock.
struct AppHarness {
    let test: TestStore
    let clock: ManualClock
    let store: ClientStore
    let center: FakeNotificationCenter
    let reporter: FakeCallReporter
    let transport: ScriptedTransport
    let backgroundTime: FakeBackgroundTime
    let signal: LocalProcessSignal
    let app: BeckonApp

    /// `observesSuspension`: the store suspends as on iOS (GRDB's notification is process-wide:
    /// only the serialized `StoreSuspensionTests` use it).
    /// `unlocked`: while it says false, the store cannot be opened (before the first unlock).
    static func make(
        observesSuspension: Bool = false, unlocked: (@Sendable () -> Bool)? = nil,
        configure: (inout BeckonApp.Configuration) -> Void = { _ in }
    ) throws -> AppHarness {
        let test = try TestStore()
        let clock = ManualClock()
        let store =
            if let unlocked {
                ClientStore.deferred(path: test.path, clock: clock, canOpen: unlocked)
            } else {
                try test.open(clock: clock, observesSuspension: observesSuspension)
            }
        let center = FakeNotificationCenter()
        let reporter = FakeCallReporter()
        let transport = ScriptedTransport()
        let backgroundTime = FakeBackgroundTime()
        let signal = LocalProcessSignal()
        var configuration = BeckonApp.Configuration(endpoint: SessionHarness.endpoint)
        configure(&configuration)
        let app = BeckonApp(
            configuration: configuration, store: store,
            ports: BeckonApp.Ports(
                notificationCenter: center, callReporter: reporter, backgroundTime: backgroundTime, clock: clock,
                transport: transport, processSignal: signal),
            renderer: { NotificationContent(body: $0.payload?["text"]?.stringValue) }, jitter: JitterSource(seed: 3))
        return AppHarness(
            test: test, clock: clock, store: store, center: center, reporter: reporter, transport: transport,
            backgroundTime: backgroundTime, signal: signal, app: app)
    }

    /// Answers connection `index`'s hello with `welcome` and the messages `sequences`.
    @discardableResult
    func serve(_ index: Int, lastSequence: Int64, badge: Int = 0, messages sequences: [Int64] = []) async throws -> ScriptedConnection {
        let connection = try await transport.connection(index)
        try await connection.waitForSent("hello") { if case .hello = $0 { true } else { false } }
        connection.welcome(lastSequence: lastSequence, badge: badge)
        for sequence in sequences { connection.message(sequence) }
        return connection
    }

    /// A background push that syncs on connection 0 (`welcome` with `lastSequence`, then the
    /// messages), the server's close after `bye`, and the completion handler called.
    func wake(
        lastSequence: Int64, badge: Int = 0, messages sequences: [Int64] = [],
        snapshot: @escaping @Sendable () -> String = { "" }
    ) async throws -> CompletionRecorder {
        let recorder = CompletionRecorder(clock: clock, snapshot: snapshot)
        app.handle(.didReceiveRemoteNotification(Self.wake, state: .background, completion: recorder.completion))
        try await closeAfterBye(try await serve(0, lastSequence: lastSequence, badge: badge, messages: sequences))
        try await eventually("completed") { !recorder.results.isEmpty }
        return recorder
    }

    /// Plays the server's answer to `bye`.
    func closeAfterBye(_ connection: ScriptedConnection) async throws {
        try await connection.waitForSent("bye") { $0 == .bye }
        connection.serverClose(1000)
    }

    func leaseHolder() throws -> String? { try store.leaseRow(key: "writer")?.holder }

    /// Whether the last session said `bye` and the lease is free: what must hold before a
    /// completion handler is called.
    var cleanupState: @Sendable () -> String {
        { [transport, store] in
            let bye = transport.connections.last?.sent.contains(.bye) == true ? "bye sent" : "no bye"
            let holder = (try? store.leaseRow(key: "writer")?.holder) ?? nil
            return "\(bye), lease \(holder == nil ? "free" : "held")"
        }
    }

    static let wake: JSONValue = ["aps": ["content-available": 1], "beckon": ["reason": "wake", "ids": ["m1"]]]
}

/// A completion handler that records its calls, and what `snapshot` saw at the moment of each
/// (iOS may suspend the app as soon as it returns).
final class CompletionRecorder: @unchecked Sendable {
    private let lock = NSLockBox()
    private var _results: [(BackgroundFetchResult, Date, String)] = []
    let clock: ManualClock
    let snapshot: @Sendable () -> String

    init(clock: ManualClock, snapshot: @escaping @Sendable () -> String = { "" }) {
        self.clock = clock
        self.snapshot = snapshot
    }

    var results: [BackgroundFetchResult] { lock.run { _results.map(\.0) } }
    var calledAt: Date? { lock.run { _results.first?.1 } }
    /// What `snapshot` said when the handler was first called.
    var seenAtCall: String? { lock.run { _results.first?.2 } }

    var completion: BackgroundCompletion {
        BackgroundCompletion { result in
            let seen = self.snapshot()
            self.lock.run { self._results.append((result, self.clock.now(), seen)) }
        }
    }
}

/// UIKit's background tasks: `expireAll()` plays iOS taking the time back, and says which
/// tasks were still open when their expiration handler returned (Apple terminates the app then).
final class FakeBackgroundTime: BackgroundTimePort, @unchecked Sendable {
    private let lock = NSLockBox()
    private var next = 0
    private var _open: [Int: @Sendable () -> Void] = [:]
    private var _begun = 0

    var openTasks: Int { lock.run { _open.count } }
    var begun: Int { lock.run { _begun } }

    func begin(_ name: String, expired: @escaping @Sendable () -> Void) -> BackgroundTaskToken {
        lock.run {
            next += 1
            _begun += 1
            _open[next] = expired
            return BackgroundTaskToken(next)
        }
    }

    func end(_ token: BackgroundTaskToken) { _ = lock.run { _open.removeValue(forKey: token.rawValue) } }

    /// Calls every open task's expiration handler; returns the tasks still open after their
    /// handler returned.
    func expireAll() -> [Int] {
        let open = lock.run { _open }
        var leftOpen: [Int] = []
        for (id, expired) in open.sorted(by: { $0.key < $1.key }) {
            expired()
            if lock.run({ _open[id] != nil }) { leftOpen.append(id) }
        }
        return leftOpen
    }
}

/// A notification centre, and a port over it that removes its observers when it goes, as
/// `UIApplicationLifecycle` does over `NotificationCenter`.
final class LifecycleCenter: @unchecked Sendable {
    private let lock = NSLockBox()
    private var observers: [Int: @Sendable (AppLifecycleEvent) -> Void] = [:]
    private var next = 0

    func add(_ handler: @escaping @Sendable (AppLifecycleEvent) -> Void) -> Int {
        lock.run {
            next += 1
            observers[next] = handler
            return next
        }
    }

    func remove(_ token: Int) { _ = lock.run { observers.removeValue(forKey: token) } }

    func post(_ event: AppLifecycleEvent) {
        for handler in lock.run({ Array(observers.values) }) { handler(event) }
    }
}

final class ScopedLifecycle: AppLifecyclePort, @unchecked Sendable {
    let center: LifecycleCenter
    private let lock = NSLockBox()
    private var tokens: [Int] = []

    init(center: LifecycleCenter) { self.center = center }

    func observe(_ handler: @escaping @Sendable (AppLifecycleEvent) -> Void) {
        let token = center.add(handler)
        lock.run { tokens.append(token) }
    }

    deinit { for token in tokens { center.remove(token) } }
}

/// UIKit's application-state notifications, posted by the test.
final class FakeLifecycle: AppLifecyclePort, @unchecked Sendable {
    private let lock = NSLockBox()
    private var handlers: [@Sendable (AppLifecycleEvent) -> Void] = []

    func observe(_ handler: @escaping @Sendable (AppLifecycleEvent) -> Void) { lock.run { handlers.append(handler) } }

    func post(_ event: AppLifecycleEvent) {
        for handler in lock.run({ handlers }) { handler(event) }
    }
}

/// Records taps the app opens.
final class TapRecorder: @unchecked Sendable {
    private let lock = NSLockBox()
    private var _taps: [NotificationTap] = []
    var taps: [NotificationTap] { lock.run { _taps } }
    var open: @Sendable (NotificationTap) -> Void { { tap in self.lock.run { self._taps.append(tap) } } }
}
