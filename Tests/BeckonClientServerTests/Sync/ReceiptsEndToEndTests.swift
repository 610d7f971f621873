import BeckonClient
import BeckonClientTestSupport
import BeckonProtocol
import BeckonStore
import Foundation
import Testing

/// The phone's receipts reach the message's trace: what it showed (the session presents the
/// message in the background), what the user tapped, and the sync acknowledgement.
@Suite(.serialized) struct ReceiptsEndToEndTests {
    @Test func shownOpenedAndSyncedReachTheTrace() async throws {
        try await ClientTestServer.with { server in
            let phone = try await ClientTestDevice(server: server, user: "u1", device: "phone")
            defer { phone.remove() }
            let id = try await server.post(to: ["u1"], text: "hello")
            let writer = try await phone.lock.acquire(timeout: .seconds(10))
            let session = phone.session(writer: writer)
            await session.start()
            #expect(await session.untilCaughtUp())
            try await eventually("shown on the phone") { await phone.center.delivered.count == 1 }

            // The user taps it: queued, then sent on the open session.
            try phone.store.queueReceipts([id], kind: .opened, as: writer)
            session.sendReceipts()
            try await eventually("the receipts were sent") { try phone.store.pendingReceipts().isEmpty }

            let traced: () async throws -> [ReceiptKind] = {
                (try await server.store.traceRecords(appID: "chat", messageID: id))?.receipts.map(\.kind) ?? []
            }
            try await eventually("the trace has them") { Set(try await traced()) == [.synced, .shown, .opened] }
            let receipts = try #require(try await server.store.traceRecords(appID: "chat", messageID: id)).receipts
            #expect(receipts.allSatisfy { $0.device == DeviceRef(appID: "chat", deviceID: "phone") })

            await session.stopAndWait()
            await writer.release()
        }
    }
}
