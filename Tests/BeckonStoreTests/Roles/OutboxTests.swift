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

    /// Two pushes with one caller-chosen apns-id (gorush's `apns_id`) are kept apart by their own
    /// keys and each is claimed with the caller's header.
    @Test func pushesSharingACallersAPNsIDAreKeptApart() async throws {
        try await withEachStore { store in
            try await store.createApp(.fixture())
            _ = try await store.registerDevice(.fixture(device: "phone", user: "alice", pushToken: token("a")))
            let shared = try Self.push(1)
            let pushes = (2...3).map { n in
                var push = shared
                push.id = String(format: "00000000-0000-4000-8000-%012d", n)
                return push
            }
            try await store.saveDelivery(DeliveryBatch(pushes: pushes))
            let claimed = try await store.claimPushes(
                appID: "chat", before: Date(timeIntervalSince1970: 2_000), limit: 10, leaseUntil: Date(timeIntervalSince1970: 3_000))
            #expect(Set(claimed.map(\.id)) == Set(pushes.map(\.id)))
            #expect(claimed.allSatisfy { $0.notification.apnsID == shared.notification.apnsID })
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

    /// Results recorded at once (PostgreSQL puts them in one statement) each land on their own
    /// push, and wake outcomes on theirs; a retried push stays pending until its next attempt.
    @Test func resultsAndWakeOutcomesLandOnTheirOwnPushes() async throws {
        try await withEachStore { store in
            try await store.createApp(.fixture())
            _ = try await store.registerDevice(.fixture(device: "phone", user: "alice", pushToken: token("a")))
            // The message count tells the pushes apart in the report's records.
            let pushes = try (1...4).map { n in
                var push = try Self.push(n)
                push.messageCount = n
                return push
            }
            try await store.saveDelivery(DeliveryBatch(pushes: pushes))
            let claimed = try await store.claimPushes(
                appID: "chat", before: Date(timeIntervalSince1970: 2_000), limit: 10, leaseUntil: Date(timeIntervalSince1970: 3_000))
            #expect(claimed.count == 4)
            let at = Date(timeIntervalSince1970: 2_100), next = Date(timeIntervalSince1970: 4_000)
            let results: [PushAttemptResult] = [
                .sent(at: at), .failed(status: 410, reason: "Unregistered", at: at),
                .retry(status: 429, reason: "TooManyRequests", nextAttempt: next), .failed(status: 0, reason: nil, at: at),
            ]
            try await withThrowingTaskGroup(of: Void.self) { group in
                for (push, result) in zip(pushes, results) {
                    group.addTask { try await store.completePush(id: push.id, result: result) }
                }
                try await group.waitForAll()
            }
            try await store.saveDelivery(DeliveryBatch(wakes: [
                WakeOutcome(device: pushes[0].device, pushID: pushes[0].id, latency: 2.5),
                // Decided after the device connected, before its connection was planned: it came.
                WakeOutcome(device: pushes[1].device, pushID: pushes[1].id, latency: -0.25),
                WakeOutcome(device: pushes[3].device, pushID: pushes[3].id, latency: nil),
            ]))
            let records = try await store.pushRecords(appID: "chat", since: Date(timeIntervalSince1970: 0))
                .sorted { $0.messageCount < $1.messageCount }
            #expect(records.map(\.state) == ["sent", "failed", "pending", "failed"])
            #expect(records.map(\.status) == [200, 410, 429, 0])
            #expect(records.map(\.wake) == ["observed", "observed", nil, "missed"])
            #expect(records.map(\.wakeLatency) == [2.5, -0.25, nil, nil])
            // What the status page charts and lists: when each was decided, and Apple's reason.
            #expect(records.map(\.createdAt) == (1...4).map { Date(timeIntervalSince1970: 1_000 + Double($0)) })
            #expect(records.map(\.apnsReason) == [nil, "Unregistered", "TooManyRequests", nil])
            let counts = try await store.appCounts(appID: "chat")
            #expect(counts == AppCounts(devices: 1, devicesWithoutToken: 0, pendingPushes: 1))
            let early = try await store.claimPushes(
                appID: "chat", before: Date(timeIntervalSince1970: 3_999), limit: 10, leaseUntil: Date(timeIntervalSince1970: 9_000))
            #expect(early.isEmpty, "a retry waits for its next attempt")
            let due = try await store.claimPushes(
                appID: "chat", before: next, limit: 10, leaseUntil: Date(timeIntervalSince1970: 9_000))
            #expect(due.map(\.id) == [pushes[2].id])
        }
    }
}
