import BeckonClient
import BeckonClientTestSupport
import BeckonProtocol
import Foundation
import Testing

/// The app and its extension on one device (docs/design.md, "Sync roles"): the lease hands the
/// store over inside the device, the server's role preemption (4002) closes the extension's
/// session on the wire.
@Suite(.serialized) struct SyncRolesEndToEndTests {
    @Test func theAppTakesOverFromAnExtensionThatIsSyncing() async throws {
        try await ClientTestServer.with { server in
            let app = try await ClientTestDevice(server: server, user: "u1", device: "d1")
            let nse = try await ClientTestDevice(server: server, user: "u1", device: "d1", role: .extension, sharing: app)
            defer { app.remove() }
            for index in 1...3 { try await server.post(to: ["u1"], text: "\(index)") }

            let extensionWriter = try await nse.lock.acquire(timeout: .seconds(10))
            let extensionSession = nse.session(writer: extensionWriter, role: .extension)
            let handler = await nse.lock.onRevocation { _ in extensionSession.preempt() }
            await extensionSession.start()
            #expect(await extensionSession.untilCaughtUp())

            // The user opens the app: it asks for the lease; the extension stops and lets go.
            let appAcquire = Task { try await app.lock.acquire(timeout: .seconds(10)) }
            #expect(await extensionSession.untilStopped() == .preempted)
            await extensionWriter.release()
            await nse.lock.removeRevocationHandler(handler)
            let appWriter = try await appAcquire.value
            #expect(appWriter.isDirty == false, "first acquisition in this process")
            let appSession = app.session(writer: appWriter)
            await appSession.start()
            #expect(await appSession.untilCaughtUp())
            try await server.post(to: ["u1"], text: "4")
            try await eventually("the app stores what follows") { try app.store.cursor() == 4 }
            await appSession.stopAndWait()
            await appWriter.release()
        }
    }

    @Test
    func theServerClosesTheExtensionsSessionWhenTheAppConnects() async throws {
        try await ClientTestServer.with { server in
            // Two stores here, so no lease hands over: only the server's rule is at work.
            let nse = try await ClientTestDevice(server: server, user: "u1", device: "d1", role: .extension)
            defer { nse.remove() }
            let nseWriter = try await nse.lock.acquire(timeout: .seconds(10))
            let extensionSession = nse.session(writer: nseWriter, role: .extension)
            await extensionSession.start()
            #expect(await extensionSession.untilCaughtUp())

            let appTest = try TestStore()
            defer { appTest.remove() }
            let appStore = try appTest.open(clock: SystemClock())
            let appLock = LeaseLock(store: appStore, holder: LeaseHolder(role: .app), clock: SystemClock())
            let appWriter = try await appLock.acquire(timeout: .seconds(10))
            let appSession = SyncSession(
                configuration: SyncSession.Configuration(endpoint: nse.endpoint, role: .app), store: appStore,
                writer: appWriter, transport: NIOTransportForTests.make(), clock: SystemClock(), presenter: nil, calls: nil)
            await appSession.start()
            #expect(await appSession.untilCaughtUp())
            #expect(await extensionSession.untilStopped() == .preempted, "closed with 4002, and not reconnecting")

            // An extension that tries while the app is connected is refused the same way.
            let again = nse.session(writer: nseWriter, role: .extension)
            await again.start()
            #expect(await again.untilStopped() == .preempted)
            #expect(await appSession.state != .stopped(.preempted), "an extension never displaces the app")
            await appSession.stopAndWait()
            await appWriter.release()
            await nseWriter.release()
        }
    }
}

import BeckonClientNIO

enum NIOTransportForTests {
    static func make() -> any SyncTransport { NIOSyncTransport() }
}
