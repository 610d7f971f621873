@testable import BeckonClient
import BeckonClientTestSupport
import BeckonJSON
import BeckonProtocol
import Foundation
import Testing

/// The `filtering` strategy: the extension syncs as role `extension`, then shows or suppresses
/// (apns.md E.4; docs/design.md, "Delivery strategies").
@Suite struct ExtensionSyncTests {
    struct Setup {
        let test: TestStore
        let clock = ManualClock()
        let store: ClientStore
        let lock: LeaseLock
        let transport = ScriptedTransport()
        let handler: NotificationServiceHandler

        init() throws {
            test = try TestStore()
            store = try test.open(clock: clock)
            lock = LeaseLock(store: store, holder: LeaseHolder(role: .extension), clock: clock)
            let sync = ExtensionSync(endpoint: SessionHarness.endpoint, store: store, lock: lock, transport: transport, clock: clock)
            handler = NotificationServiceHandler(
                configuration: .init(canSuppress: true), fetcher: FakeMessageFetcher(), clock: clock, store: store, lock: lock,
                renderer: { NotificationContent(body: $0.payload?["text"]?.stringValue) }, sync: sync)
        }

        /// Plays the server: welcome, then the messages, then the close after `bye`.
        func serve(_ messages: [(Int64, Bool)]) async throws {
            let connection = try await transport.connection(0)
            try await connection.waitForSent("hello as extension") { if case .hello(_, .extension, _, _) = $0 { true } else { false } }
            connection.welcome(lastSequence: Int64(messages.count))
            for (sequence, read) in messages { connection.message(sequence, read: read, text: "text \(sequence)") }
            try await connection.waitForSent("bye") { $0 == .bye }
            connection.serverClose(1000)
        }
    }

    static func push(_ sequence: Int64) -> IncomingNotification {
        let id = ScriptedConnection.id(sequence)
        return IncomingNotification(
            identifier: id, payload: ["aps": ["alert": ["loc-key": "BECKON_NEW_MESSAGE"]], "beckon": ["reason": "alert", "ids": .array([.string(id)])]])
    }

    @Test func aNewMessageIsShownFromTheStoreAfterTheSync() async throws {
        let setup = try Setup()
        defer { setup.test.remove() }
        async let outcome = setup.handler.handle(Self.push(1))
        try await setup.serve([(1, false)])
        #expect(await outcome.content?.body == "text 1")
        #expect(try setup.store.cursor() == 1)
        let entry = try setup.store.ledgerEntry(messageID: ScriptedConnection.id(1))
        #expect(entry?.shownBy == .extension)
    }

    @Test func pushesHandledAtOnceShareOneSync() async throws {
        let setup = try Setup()
        defer { setup.test.remove() }
        // iOS calls `didReceive` for two pushes at once in one process (docs/simulator.md, "Field practice the model uses").
        async let first = setup.handler.handle(Self.push(1))
        async let second = setup.handler.handle(Self.push(2))
        try await setup.serve([(1, false), (2, false)])
        #expect(await first.content?.body == "text 1")
        #expect(await second.content?.body == "text 2")
        #expect(setup.transport.attemptCount == 1, "one session, not two replacing each other (4001)")
    }

    @Test func aMessageReadElsewhereIsSuppressed() async throws {
        let setup = try Setup()
        defer { setup.test.remove() }
        async let outcome = setup.handler.handle(Self.push(2))
        try await setup.serve([(1, false), (2, true)])
        #expect(await outcome == .suppressed)
    }
}
