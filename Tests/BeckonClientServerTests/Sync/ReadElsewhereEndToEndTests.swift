import BeckonClient
import BeckonClientTestSupport
import BeckonProtocol
import Foundation
import Testing

/// Rule 7 between two devices of one user, through the real server.
@Suite(.serialized) struct ReadElsewhereEndToEndTests {
    @Test func aReadOnOneDeviceRemovesExactlyThatNotificationOnTheOther() async throws {
        try await ClientTestServer.with { server in
            let phone = try await ClientTestDevice(server: server, user: "u1", device: "phone")
            let tablet = try await ClientTestDevice(server: server, user: "u1", device: "tablet")
            defer {
                phone.remove()
                tablet.remove()
            }
            var ids: [String] = []
            for index in 1...3 { ids.append(try await server.post(to: ["u1"], text: "m\(index)")) }

            // The tablet stays connected, in the background: it shows three notifications.
            let tabletWriter = try await tablet.lock.acquire(timeout: .seconds(10))
            let tabletSession = tablet.session(writer: tabletWriter)
            await tabletSession.start()
            #expect(await tabletSession.untilCaughtUp())
            try await eventually("three notifications") { await tablet.center.delivered.count == 3 }
            #expect(await tablet.center.badge == 3)

            // The phone syncs and the user reads the second message there.
            let phoneWriter = try await phone.lock.acquire(timeout: .seconds(10))
            let phoneSession = phone.session(writer: phoneWriter)
            await phoneSession.start()
            #expect(await phoneSession.untilCaughtUp())
            try phone.store.markRead([ids[1]], locally: true, as: phoneWriter)
            phoneSession.sendReadMarkers([ids[1]])

            try await eventually("the tablet removed it") { await tablet.center.delivered.count == 2 }
            #expect(await tablet.center.deliveredIdentifiers() == [ids[0], ids[2]])
            try await eventually("the badge follows") { await tablet.center.badge == 2 }
            #expect(try tablet.store.message(id: ids[1])?.isRead == true)
            try await eventually("the marker was sent") { try phone.store.pendingReads().isEmpty }

            await phoneSession.stopAndWait()
            await phoneWriter.release()
            await tabletSession.stopAndWait()
            await tabletWriter.release()
        }
    }

    @Test func aDeviceThatWasOfflineLearnsWhatWasReadWhenItResumes() async throws {
        try await ClientTestServer.with { server in
            let phone = try await ClientTestDevice(server: server, user: "u1", device: "phone")
            let tablet = try await ClientTestDevice(server: server, user: "u1", device: "tablet")
            defer {
                phone.remove()
                tablet.remove()
            }
            let first = try await server.post(to: ["u1"], text: "one")
            let second = try await server.post(to: ["u1"], text: "two")
            // Read on the phone while the tablet is offline.
            _ = try await phone.syncOnce()
            let writer = try await phone.lock.acquire(timeout: .seconds(10))
            try phone.store.markRead([first], locally: true, as: writer)
            let session = phone.session(writer: writer)
            await session.start()
            try await eventually("the marker was sent") { try phone.store.pendingReads().isEmpty }
            await session.stopAndWait()
            await writer.release()

            // The tablet resumes: the message frame says read, so it is never notified.
            _ = try await tablet.syncOnce()
            #expect(await tablet.center.added == [second])
            #expect(try tablet.store.message(id: first)?.isRead == true)
            #expect(await tablet.center.badge == 1)
        }
    }
}
