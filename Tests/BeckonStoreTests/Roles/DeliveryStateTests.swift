import BeckonProtocol
import Foundation
import Testing

@testable import BeckonStore

/// Planner states are saved only from the version they were planned from, and their deadlines
/// are claimed so that one planning step takes each (several nodes, one database).
@Suite struct DeliveryStateTests {
    static let phone = DeviceRef(appID: "chat", deviceID: "phone")
    static let tablet = DeviceRef(appID: "chat", deviceID: "tablet")

    static func prepared(_ store: any BeckonStore) async throws {
        try await store.createApp(.fixture())
        _ = try await store.registerDevice(.fixture(device: "phone", user: "alice", pushToken: token("a")))
        _ = try await store.registerDevice(.fixture(device: "tablet", user: "alice", pushToken: token("b")))
    }

    static func state(_ device: DeviceRef, _ text: String, version: Int64, deadline: Date? = nil) -> DeliveryState {
        DeliveryState(device: device, planner: Data(text.utf8), nextDeadline: deadline, unreachable: false, version: version)
    }

    @Test func aDeviceSavedMeanwhileIsLeftOutOfTheBatchWithItsPushes() async throws {
        try await withEachStore { store in
            try await Self.prepared(store)
            try await store.saveDelivery(DeliveryBatch(states: [Self.state(Self.phone, "first", version: 0)]))
            #expect(try await store.deliveryStates([Self.phone])[Self.phone]?.version == 1)

            // Two planning steps read version 1; the first to save wins.
            try await store.saveDelivery(DeliveryBatch(states: [Self.state(Self.phone, "node A", version: 1)]))
            let late = DeliveryBatch(
                states: [Self.state(Self.tablet, "tablet", version: 0), Self.state(Self.phone, "node B", version: 1)],
                pushes: [try Self.push(1, to: Self.phone), try Self.push(2, to: Self.tablet)])
            #expect(try await store.saveDelivery(late) == [Self.phone])

            let states = try await store.deliveryStates([Self.phone, Self.tablet])
            #expect(states[Self.phone].map { String(decoding: $0.planner, as: UTF8.self) } == "node A")
            #expect(states[Self.phone]?.version == 2)
            #expect(states[Self.tablet].map { String(decoding: $0.planner, as: UTF8.self) } == "tablet")
            let pushes = try await store.claimPushes(
                appID: "chat", before: Date.distantFuture, limit: 10, leaseUntil: Date.distantFuture)
            #expect(pushes.map(\.device) == [Self.tablet], "the phone's push from the outdated plan is not queued")

            // A first save of a device that another step saved meanwhile is left out too.
            #expect(try await store.saveDelivery(DeliveryBatch(states: [Self.state(Self.phone, "new", version: 0)])) == [Self.phone])
        }
    }

    static func push(_ n: Int, to device: DeviceRef) throws -> OutboxPush {
        var push = try OutboxTests.push(n)
        push.device = device
        return push
    }

    /// What a restarted lone node asks for: the devices whose planner was saved as connected.
    @Test func devicesSavedAsConnectedAreFoundUntilSavedOtherwise() async throws {
        try await withEachStore { store in
            try await Self.prepared(store)
            var phone = Self.state(Self.phone, "connected", version: 0)
            phone.connected = true
            try await store.saveDelivery(DeliveryBatch(states: [phone, Self.state(Self.tablet, "not", version: 0)]))
            #expect(try await store.devicesSavedAsConnected() == [Self.phone])
            #expect(try await store.deliveryStates([Self.phone])[Self.phone]?.connected == true)
            try await store.saveDelivery(DeliveryBatch(states: [Self.state(Self.phone, "dropped", version: 1)]))
            #expect(try await store.devicesSavedAsConnected() == [])
        }
    }

    @Test func aDueDeadlineIsClaimedOnceUntilItsLeaseEnds() async throws {
        try await withEachStore { store in
            try await Self.prepared(store)
            let due = Date(timeIntervalSince1970: 1_000)
            try await store.saveDelivery(DeliveryBatch(states: [
                Self.state(Self.phone, "due", version: 0, deadline: due),
                Self.state(Self.tablet, "later", version: 0, deadline: Date(timeIntervalSince1970: 5_000)),
            ]))
            let now = Date(timeIntervalSince1970: 2_000), lease = Date(timeIntervalSince1970: 2_030)
            #expect(try await store.claimDueDeliveryStates(before: now, limit: 10, leaseUntil: lease) == [Self.phone])
            #expect(try await store.claimDueDeliveryStates(before: now, limit: 10, leaseUntil: lease).isEmpty)
            // Its planning never saved (the node died): due again when the lease ends.
            #expect(try await store.claimDueDeliveryStates(before: lease, limit: 10, leaseUntil: lease + 30) == [Self.phone])
            // Claiming is no save: the planner's version is unchanged, its save goes through.
            try await store.saveDelivery(DeliveryBatch(states: [Self.state(Self.phone, "planned", version: 1)]))
            #expect(try await store.deliveryStates([Self.phone])[Self.phone]?.version == 2)
        }
    }
}
