import APNSCore
import BeckonProtocol
@testable import BeckonDelivery
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
        var queue = OutboxQueueStateMachine(slots: 2, holdPerSlot: 2)
        queue.pollAll(["chat", "mail"])
        #expect(queue.holdLimit == 4)
        #expect(queue.claimSize(for: "chat") == 4)
        queue.claimedFullPage([try Self.item(1), try Self.item(2), try Self.item(3)])
        // One more would fit, but a page of one is not worth a write.
        #expect(queue.claimSize(for: "chat") == nil)
        #expect(queue.claimSize(for: "mail") == 4, "another app's room is its own")
    }

    @Test func sendsStartOnlyInFreeSlotsAndAnAnsweredSendFreesOne() throws {
        var queue = OutboxQueueStateMachine(slots: 2, holdPerSlot: 2)
        let items = try (1...4).map { try Self.item($0) }
        queue.claimedFullPage(items)
        #expect(queue.takeStartable().map(\.push.id) == items.prefix(2).map(\.push.id))
        #expect(queue.takeStartable().isEmpty, "both slots are busy")
        queue.answered(items[0].push)
        #expect(queue.takeStartable().map(\.push.id) == [items[2].push.id])
        #expect(queue.heldCount(for: "chat") == 4, "its result is not stored yet")
        queue.finished(items[0].push)
        #expect(queue.heldCount(for: "chat") == 3)
    }

    @Test func resultsWaitingForTheStoreHoldBackClaimsNotSends() throws {
        var queue = OutboxQueueStateMachine(slots: 2, holdPerSlot: 2)
        queue.pollAll(["chat"])
        queue.claimedFullPage(try (1...4).map { try Self.item($0) })
        let first = queue.takeStartable()
        for item in first { queue.answered(item.push) }
        #expect(queue.takeStartable().count == 2, "APNs answered: the slots are free")
        queue.mayHoldDue("chat")
        #expect(queue.claimSize(for: "chat") == nil, "four held, two of them still being stored")
        for item in first { queue.finished(item.push) }
        #expect(queue.claimSize(for: "chat") == 2)
    }

    @Test func aHungAppCannotTakeAnotherAppsSlots() throws {
        var queue = OutboxQueueStateMachine(slots: 1, holdPerSlot: 2)
        queue.claimedFullPage([try Self.item(1, app: "stuck"), try Self.item(2, app: "stuck"), try Self.item(3, app: "chat")])
        let started = queue.takeStartable().map(\.app).sorted()
        #expect(started == ["chat", "stuck"])
        // The stuck app's send never ends; the other app's next push still starts.
        queue.claimedFullPage([try Self.item(4, app: "chat")])
        queue.sent(try Self.item(3, app: "chat").push)
        #expect(queue.takeStartable().map(\.app) == ["chat"])
    }

    @Test func anAppIsClaimedOnlyWhileItsOutboxMayHoldDuePushes() throws {
        var queue = OutboxQueueStateMachine(slots: 2, holdPerSlot: 2)
        #expect(queue.claimSize(for: "chat") == nil, "not before the first poll")
        queue.pollAll(["chat"])
        let ticket = queue.claimTicket(for: "chat")
        #expect(queue.claimSize(for: "chat") == 4)
        // The claim found one push where it asked for four: the outbox holds no more.
        queue.claimed([try Self.item(1)], of: "chat", asked: 4, ticket: ticket)
        #expect(queue.claimSize(for: "chat") == nil)
        // Pushes saved pending make it worth a claim again.
        queue.sent(try Self.item(1).push)
        queue.mayHoldDue("chat")
        #expect(queue.claimSize(for: "chat") == 4)
    }

    @Test func aClaimThatRanWhilePushesWereSavedDoesNotForgetThem() throws {
        var queue = OutboxQueueStateMachine(slots: 2, holdPerSlot: 2)
        queue.pollAll(["chat"])
        let ticket = queue.claimTicket(for: "chat")
        queue.mayHoldDue("chat")  // Saved while the claim's read was under way: it did not see them.
        queue.claimed([], of: "chat", asked: 4, ticket: ticket)
        #expect(queue.claimSize(for: "chat") == 4)
    }

    @Test func thePlannerHandsOverWhatFitsAndTheRestWaitsInTheOutbox() throws {
        var queue = OutboxQueueStateMachine(slots: 2, holdPerSlot: 2)
        #expect(queue.reserve(for: "chat", upTo: 1) == 0, "nothing before the first poll")
        queue.pollAll(["chat"], backlog: true)
        #expect(queue.reserve(for: "chat", upTo: 1) == 0, "nothing while a previous run's pushes wait")
        queue.claimed([], of: "chat", asked: 4, ticket: queue.claimTicket(for: "chat"))

        #expect(queue.reserve(for: "chat", upTo: 3) == 3)
        #expect(queue.heldCount(for: "chat") == 3, "reserved room counts as held")
        queue.handedOver([try Self.item(1), try Self.item(2), try Self.item(3)])
        #expect(queue.takeStartable().count == 2)
        // Two more decided: one fits; the other is saved pending and marks the outbox.
        #expect(queue.reserve(for: "chat", upTo: 2) == 1)
        #expect(queue.heldCount(for: "chat") == 4)
        #expect(queue.reserve(for: "chat", upTo: 1) == 0, "the pending one goes first")
        queue.sent(try Self.item(1).push)
        queue.sent(try Self.item(2).push)
        #expect(queue.claimSize(for: "chat") == 2, "the outbox is claimed for it")
        queue.claimed([try Self.item(5)], of: "chat", asked: 2, ticket: queue.claimTicket(for: "chat"))
        #expect(queue.reserve(for: "chat", upTo: 1) == 1, "the backlog is drained")
    }

    @Test func anIdlePollDoesNotStopHandingOver() throws {
        var queue = OutboxQueueStateMachine(slots: 2, holdPerSlot: 2)
        queue.pollAll(["chat"], backlog: true)
        queue.claimed([], of: "chat", asked: 4, ticket: queue.claimTicket(for: "chat"))
        // Retries may be due: claimed, but the planner's new pushes need not wait for that claim.
        queue.pollAll(["chat"])
        #expect(queue.claimSize(for: "chat") == 4)
        #expect(queue.reserve(for: "chat", upTo: 1) == 1)
    }

    @Test func aReservationTheSaveDidNotUseIsGivenBack() throws {
        var queue = OutboxQueueStateMachine(slots: 2, holdPerSlot: 2)
        queue.pollAll(["chat"])
        queue.claimed([], of: "chat", asked: 4, ticket: queue.claimTicket(for: "chat"))
        #expect(queue.reserve(for: "chat", upTo: 4) == 4)
        queue.cancelReservation(for: "chat", count: 4)
        #expect(queue.heldCount(for: "chat") == 0)
        #expect(queue.reserve(for: "chat", upTo: 4) == 4)
    }

    @Test func aPushClaimedAgainWhileHeldIsNotQueuedTwice() throws {
        var queue = OutboxQueueStateMachine(slots: 4, holdPerSlot: 2)
        queue.claimedFullPage([try Self.item(1)])
        queue.claimedFullPage([try Self.item(1), try Self.item(2)])  // Its lease ran out while it waited.
        #expect(queue.heldCount(for: "chat") == 2)
        #expect(queue.takeStartable().count == 2)
    }
}

extension OutboxQueueStateMachine {
    /// APNs answered and the result is stored.
    mutating func sent(_ push: OutboxPush) {
        answered(push)
        finished(push)
    }

    /// A page as long as asked for: the outbox may hold more.
    mutating func claimedFullPage(_ items: [Item]) {
        for (app, page) in Dictionary(grouping: items, by: \.app) {
            claimed(page, of: app, asked: page.count, ticket: claimTicket(for: app))
        }
    }
}
