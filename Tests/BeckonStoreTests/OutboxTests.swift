import APNSCore
@testable import BeckonStore
import BeckonProtocol
import Foundation
import Testing

/// The push outbox keeps rendered requests and gives them back as they were decided.
@Suite struct OutboxTests {
    static func push(_ n: Int, ringing: (String, Date)? = nil) throws -> OutboxPush {
        let notification = try APNSRenderedNotification(
            APNSAlertNotification(badge: n, apnsID: UUID(uuidString: String(format: "00000000-0000-4000-8000-%012d", n))!),
            bundleID: "com.example.chat")
        return OutboxPush(
            device: DeviceRef(appID: "chat", deviceID: "phone"), tokenKind: .remote, reason: .alert,
            strategy: .content, notification: notification, messageCount: 1, ringingCallID: ringing?.0,
            ringingUntil: ringing?.1, createdAt: Date(timeIntervalSince1970: 1_000 + Double(n)))
    }

    @Test func aClaimedPushIsTheRenderedRequestAsDecided() async throws {
        try await withEachStore { store in
            try await store.createApp(.fixture())
            _ = try await store.registerDevice(.fixture(device: "phone", user: "alice", pushToken: token("a")))
            let decided = try Self.push(1, ringing: ("c1", Date(timeIntervalSince1970: 5_000)))
            try await store.saveDelivery(DeliveryBatch(pushes: [decided]))
            let claimed = try await store.claimPushes(
                appID: "chat", before: Date(timeIntervalSince1970: 2_000), limit: 10, leaseUntil: Date(timeIntervalSince1970: 3_000))
            #expect(claimed == [decided])
        }
    }

    @Test func anUnreadableRowIsGivenUpAloneAndTheRestAreClaimed() async throws {
        try await withEachStore { store in
            try await store.createApp(.fixture())
            _ = try await store.registerDevice(.fixture(device: "phone", user: "alice", pushToken: token("a")))
            let good = try Self.push(1), bad = try Self.push(2)
            try await store.saveDelivery(DeliveryBatch(pushes: [good, bad]))
            // Damage one row: a background push at priority 10, which APNs would refuse.
            try await execute(store, sql: "UPDATE push_outbox SET push_type = 'background', priority = 10 WHERE id = '\(bad.id)'")
            let claimed = try await store.claimPushes(
                appID: "chat", before: Date(timeIntervalSince1970: 2_000), limit: 10, leaseUntil: Date(timeIntervalSince1970: 3_000))
            #expect(claimed.map(\.id) == [good.id])
            let states = try await store.pushRecords(appID: "chat", since: Date(timeIntervalSince1970: 0)).map(\.state).sorted()
            #expect(states == ["failed", "pending"])
        }
    }
}
