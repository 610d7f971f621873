import APNSCore
import BeckonProtocol
@testable import BeckonServer
import BeckonStore
import Foundation
import Testing

/// The dispatcher's bulkhead and hold rules, without a store or a network.
@Suite struct OutboxQueueStateMachineTests {
    static func item(_ n: Int, app: String = "chat") throws -> OutboxQueueStateMachine.Item {
        let notification = try APNSRenderedNotification(
            APNSBackgroundNotification(apnsID: UUID(uuidString: String(format: "00000000-0000-4000-8000-%012d", n))!),
            bundleID: "com.example.\(app)")
        let push = OutboxPush(
            device: DeviceRef(appID: app, deviceID: "d\(n)"), tokenKind: .remote, reason: .wake, strategy: .wake,
            notification: notification, messageCount: 1, createdAt: Date(timeIntervalSince1970: 0))
        return .init(push: push, device: nil)
    }

    @Test func anAppClaimsInPagesOfAtLeastHalfItsHoldLimit() throws {
        var queue = OutboxQueueStateMachine(slots: 2)
        #expect(queue.holdLimit == 4)
        #expect(queue.claimSize(for: "chat") == 4)
        queue.claimed([try Self.item(1), try Self.item(2), try Self.item(3)])
        // One more would fit, but a page of one is not worth a write.
        #expect(queue.claimSize(for: "chat") == nil)
        #expect(queue.claimSize(for: "mail") == 4, "another app's room is its own")
    }

    @Test func sendsStartOnlyInFreeSlotsAndAFinishedSendFreesOne() throws {
        var queue = OutboxQueueStateMachine(slots: 2)
        let items = try (1...4).map { try Self.item($0) }
        queue.claimed(items)
        #expect(queue.takeStartable().map(\.push.id) == items.prefix(2).map(\.push.id))
        #expect(queue.takeStartable().isEmpty, "both slots are busy")
        queue.finished(items[0].push)
        #expect(queue.takeStartable().map(\.push.id) == [items[2].push.id])
        #expect(queue.heldCount(for: "chat") == 3)
    }

    @Test func aHungAppCannotTakeAnotherAppsSlots() throws {
        var queue = OutboxQueueStateMachine(slots: 1)
        queue.claimed([try Self.item(1, app: "stuck"), try Self.item(2, app: "stuck"), try Self.item(3, app: "chat")])
        let started = queue.takeStartable().map(\.app).sorted()
        #expect(started == ["chat", "stuck"])
        // The stuck app's send never ends; the other app's next push still starts.
        queue.claimed([try Self.item(4, app: "chat")])
        queue.finished(try Self.item(3, app: "chat").push)
        #expect(queue.takeStartable().map(\.app) == ["chat"])
    }

    @Test func aPushClaimedAgainWhileHeldIsNotQueuedTwice() throws {
        var queue = OutboxQueueStateMachine(slots: 4)
        queue.claimed([try Self.item(1)])
        queue.claimed([try Self.item(1), try Self.item(2)])  // Its lease ran out while it waited.
        #expect(queue.heldCount(for: "chat") == 2)
        #expect(queue.takeStartable().count == 2)
    }
}
