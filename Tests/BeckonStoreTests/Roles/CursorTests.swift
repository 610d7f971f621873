import Foundation
import Testing

@testable import BeckonStore

@Suite struct CursorTests {
    @Test func cursorIsCumulativeAndNeverGoesBackwards() async throws {
        try await withEachStore { store in
            try await store.createApp(.fixture())
            try await store.registerDevice(.fixture(device: "phone", user: "ann"))
            _ = try await store.appendMessages(appID: "chat", (1...5).map { _ in NewMessage(recipients: ["ann"]) })
            let phone = DeviceRef(appID: "chat", deviceID: "phone")

            #expect(try await store.cursor(device: phone) == 0)
            #expect(try await store.ack(device: phone, upTo: 3) == 3)
            #expect(try await store.ack(device: phone, upTo: 2) == 3)  // a late ack
            #expect(try await store.ack(device: phone, upTo: -7) == 3)
            #expect(try await store.cursor(device: phone) == 3)
            // Not past what exists: a message appended later must still be delivered.
            #expect(try await store.ack(device: phone, upTo: 99) == 5)
            _ = try await store.appendMessages(appID: "chat", [NewMessage(recipients: ["ann"])])
            #expect(try await store.messages(for: UserRef(appID: "chat", userID: "ann"), after: 5, limit: 10).map(\.sequence) == [6])

            await #expect(throws: BeckonStoreError.deviceNotFound(appID: "chat", deviceID: "tablet")) {
                try await store.ack(device: DeviceRef(appID: "chat", deviceID: "tablet"), upTo: 1)
            }
        }
    }

    @Test func concurrentAcksKeepTheHighest() async throws {
        try await withEachStore { store in
            try await store.createApp(.fixture())
            try await store.registerDevice(.fixture(device: "phone", user: "ann"))
            _ = try await store.appendMessages(appID: "chat", (1...200).map { _ in NewMessage(recipients: ["ann"]) })
            let phone = DeviceRef(appID: "chat", deviceID: "phone")
            try await withThrowingTaskGroup(of: Void.self) { group in
                for sequence in (1...200).shuffled() {
                    group.addTask { try await store.ack(device: phone, upTo: Int64(sequence)) }
                }
                try await group.waitForAll()
            }
            #expect(try await store.cursor(device: phone) == 200)
        }
    }

    @Test func cursorsArePerDeviceAndRestartWhenTheUserChanges() async throws {
        try await withEachStore { store in
            try await store.createApp(.fixture())
            try await store.registerDevice(.fixture(device: "phone", user: "ann"))
            try await store.registerDevice(.fixture(device: "tablet", user: "ann"))
            _ = try await store.appendMessages(appID: "chat", (1...4).map { _ in NewMessage(recipients: ["ann"]) })
            let phone = DeviceRef(appID: "chat", deviceID: "phone")
            let tablet = DeviceRef(appID: "chat", deviceID: "tablet")
            try await store.ack(device: phone, upTo: 4)
            try await store.ack(device: tablet, upTo: 1)
            #expect(try await store.cursor(device: phone) == 4)
            #expect(try await store.cursor(device: tablet) == 1)

            // Re-registering for the same user keeps the cursor.
            try await store.registerDevice(.fixture(device: "phone", user: "ann"))
            #expect(try await store.cursor(device: phone) == 4)
            // Another user signs in on the phone: Bob's mailbox starts from its beginning.
            try await store.registerDevice(.fixture(device: "phone", user: "bob"))
            #expect(try await store.cursor(device: phone) == 0)
        }
    }

    @Test func readStateIsPerDeviceAndReadElsewhereIsReportedOnce() async throws {
        try await withEachStore { store in
            try await store.createApp(.fixture())
            try await store.registerDevice(.fixture(device: "phone", user: "ann"))
            try await store.registerDevice(.fixture(device: "tablet", user: "ann"))
            try await store.registerDevice(.fixture(device: "bobs", user: "bob"))
            let appended = try await store.appendMessages(appID: "chat", [
                NewMessage(recipients: ["ann"]),
                NewMessage(recipients: ["ann", "bob"], kind: .call),
                NewMessage(recipients: ["ann"], kind: .receipt),
                NewMessage(recipients: ["bob"]),
            ])
            let ids = appended.map(\.message.id)
            let ann = UserRef(appID: "chat", userID: "ann")
            let phone = DeviceRef(appID: "chat", deviceID: "phone")
            let tablet = DeviceRef(appID: "chat", deviceID: "tablet")
            #expect(try await store.unreadCount(of: ann) == 2)  // the receipt does not count

            // The phone reads the first message, plus one that is Bob's only and an unknown id.
            #expect(try await store.markRead(device: phone, messageIDs: [ids[0], ids[3], "nope", ids[0]]) == [ids[0]])
            #expect(try await store.unreadCount(of: ann) == 1)
            // Read again on the same or another device: not news for the user.
            #expect(try await store.markRead(device: phone, messageIDs: [ids[0]]) == [])
            #expect(try await store.markRead(device: tablet, messageIDs: [ids[0], ids[1]]) == [ids[1]])
            #expect(try await store.unreadCount(of: ann) == 0)

            // Ann reading the call does not read it for Bob.
            #expect(try await store.unreadCount(of: UserRef(appID: "chat", userID: "bob")) == 2)
            #expect(try await store.markRead(device: DeviceRef(appID: "chat", deviceID: "bobs"), messageIDs: [ids[1]]) == [ids[1]])

            // A read stays a read after the device that made it is gone.
            #expect(try await store.deleteDevice(tablet))
            #expect(try await store.unreadCount(of: ann) == 0)
        }
    }
}
