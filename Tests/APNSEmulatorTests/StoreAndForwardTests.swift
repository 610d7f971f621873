import APNSCore
import EmulatorTestSupport
import Foundation
import NIOConcurrencyHelpers
import Testing

@testable import APNSEmulator

@Suite("Devices and store-and-forward")
struct StoreAndForwardTests {
    func alert(_ text: String, jwt: String, token: String = tokenA, extra: [(String, String)] = []) -> TestRequest {
        .push(token: token, jwt: jwt, extra: extra, body: #"{"aps":{"alert":"\#(text)"}}"#)
    }

    @Test("Online devices receive in order; a collapse id replaces the displayed notification")
    func online() async throws {
        try await withEmulator { emulator, key in
            try emulator.registerDevice(token: tokenA, bundleID: "com.example.app")
            let client = try await TestClient.connect(to: emulator)
            defer { Task { await client.close() } }
            let jwt = key.token()
            for text in ["one", "two", "three"] {
                #expect(try await client.send(alert(text, jwt: jwt, extra: [("apns-collapse-id", "thread")])).status == 200)
            }
            #expect(try await client.send(alert("four", jwt: jwt)).status == 200)
            let received = emulator.deliveries(to: tokenA)
            #expect(received.map(\.payloadString) == ["one", "two", "three", "four"].map { #"{"aps":{"alert":"\#($0)"}}"# })
            let displayed = emulator.displayedNotifications(on: tokenA)
            #expect(displayed.count == 2)
            #expect(displayed[0].collapseID == "thread")
            #expect(displayed[0].payloadString.contains("three"))
            #expect(emulator.counters.delivered == 4)
        }
    }

    @Test("Offline: only the newest is kept, delivered on coming online")
    func offlineNewestOnly() async throws {
        try await withEmulator { emulator, key in
            try emulator.registerDevice(token: tokenA, bundleID: "com.example.app", online: false)
            let client = try await TestClient.connect(to: emulator)
            defer { Task { await client.close() } }
            let jwt = key.token()
            #expect(try await client.send(alert("old", jwt: jwt)).status == 200)
            #expect(try await client.send(alert("new", jwt: jwt)).status == 200)
            #expect(emulator.deliveries(to: tokenA).isEmpty)
            #expect(emulator.storedNotification(for: tokenA)?.payloadString.contains("new") == true)
            try emulator.setDeviceOnline(token: tokenA, true)
            let received = emulator.deliveries(to: tokenA)
            #expect(received.count == 1)
            #expect(received[0].payloadString.contains("new"))
            #expect(emulator.discardedCount(for: tokenA) == 1)
            #expect(emulator.storedNotification(for: tokenA) == nil)
        }
    }

    @Test("The device side hears each notification's fate in order: accepted, stored, replaced, delivered")
    func deviceObserver() async throws {
        try await withEmulator { emulator, key in
            try emulator.registerDevice(token: tokenA, bundleID: "com.example.app", online: false)
            let heard = NIOLockedValueBox<[String]>([])
            emulator.observeDevices { event in
                let text = String(event.notification.payloadString.split(separator: "\"").dropLast().last ?? "")
                let step = switch event {
                case .accepted: "accepted"
                case .stored: "stored"
                case .delivered: "delivered"
                case .discarded(_, let why): "discarded(\(why.rawValue))"
                }
                heard.withLockedValue { $0.append("\(step) \(text)") }
            }
            let client = try await TestClient.connect(to: emulator)
            defer { Task { await client.close() } }
            let jwt = key.token()
            #expect(try await client.send(alert("old", jwt: jwt)).status == 200)
            #expect(try await client.send(alert("new", jwt: jwt)).status == 200)
            #expect(try await client.send(alert("once", jwt: jwt, extra: [("apns-expiration", "0")])).status == 200)
            try emulator.setDeviceOnline(token: tokenA, true)
            #expect(try await client.send(alert("live", jwt: jwt)).status == 200)
            #expect(heard.withLockedValue { $0 } == [
                "accepted old", "stored old",
                "accepted new", "discarded(replaced) old", "stored new",
                "accepted once", "discarded(not-stored) once",
                "delivered new",
                "accepted live", "delivered live",
            ])
        }
    }

    @Test("apns-expiration 0 is never stored; a past expiration is dropped; expiry in storage is honoured")
    func expiration() async throws {
        let clock = TestClock()
        try await withEmulator(clock: clock) { emulator, key in
            try emulator.registerDevice(token: tokenA, bundleID: "com.example.app", online: false)
            let client = try await TestClient.connect(to: emulator)
            defer { Task { await client.close() } }
            let jwt = key.token(issuedAt: clock.now)
            let now = Int(clock.now.timeIntervalSince1970)
            #expect(try await client.send(alert("once", jwt: jwt, extra: [("apns-expiration", "0")])).status == 200)
            #expect(emulator.storedNotification(for: tokenA) == nil)
            #expect(try await client.send(alert("past", jwt: jwt, extra: [("apns-expiration", "\(now - 10)")])).status == 200)
            #expect(emulator.storedNotification(for: tokenA) == nil)
            #expect(try await client.send(alert("soon", jwt: jwt, extra: [("apns-expiration", "\(now + 60)")])).status == 200)
            #expect(emulator.storedNotification(for: tokenA) != nil)
            clock.advance(by: 61)
            try emulator.setDeviceOnline(token: tokenA, true)
            #expect(emulator.deliveries(to: tokenA).isEmpty)
            #expect(emulator.discardedCount(for: tokenA) == 3)
        }
    }

    @Test("Storage lasts at most 30 days")
    func thirtyDays() {
        let start = Date(timeIntervalSince1970: 1_800_000_000)
        var record = DeviceRecord(
            device: APNSEmulatorDevice(token: tokenA, bundleID: "b", environment: .sandbox, kind: .app,
                                       isOnline: false, registeredAt: start, unregisteredAt: nil)
        )
        let notification = APNSEmulatorNotification(
            apnsID: "X", deviceToken: tokenA, topic: "b", pushType: .alert, priority: 10, expiration: nil,
            collapseID: nil, headers: [:], payload: [1], acceptedAt: start, deliveredAt: nil
        )
        record.accept(notification, now: start, logLimit: 10)
        #expect(record.stored != nil)
        record.setOnline(true, now: start.addingTimeInterval(31 * 24 * 3600), logLimit: 10)
        #expect(record.received.isEmpty)
        record.setOnline(false, now: start, logLimit: 10)
        record.accept(notification, now: start, logLimit: 10)
        record.setOnline(true, now: start.addingTimeInterval(29 * 24 * 3600), logLimit: 10)
        #expect(record.received.count == 1)
    }

    /// A `beckon serve` on its built-in emulator runs for months; what each device received and
    /// shows must stay at the newest `deliveryLogLimit`, counted in entries kept.
    @Test("A device keeps exactly the newest deliveryLogLimit notifications")
    func deliveryLogIsBounded() async throws {
        try await withEmulator(configure: { $0.deliveryLogLimit = 5 }) { emulator, key in
            let client = try await TestClient.connect(to: emulator)
            defer { Task { await client.close() } }
            let jwt = key.token()
            for number in 1...17 {
                #expect(try await client.send(.push(token: tokenA, jwt: jwt, body: #"{"aps":{"alert":"n\#(number)"}}"#)).status == 200)
                let kept = emulator.core.state.withLockedValue { ($0.devices[tokenA]!.received.count, $0.devices[tokenA]!.displayed.count) }
                #expect(kept.0 == min(number, 5) && kept.1 == min(number, 5), "after \(number): \(kept)")
            }
            let texts = emulator.deliveries(to: tokenA).map(\.payloadString)
            #expect(texts == (13...17).map { #"{"aps":{"alert":"n\#($0)"}}"# })
            #expect(emulator.displayedNotifications(on: tokenA).map(\.payloadString) == texts)
            #expect(emulator.counters.delivered == 17)
        }
    }

    @Test("Auto-register makes a device of the topic's app on first use")
    func autoRegister() async throws {
        try await withEmulator { emulator, key in
            let client = try await TestClient.connect(to: emulator)
            defer { Task { await client.close() } }
            #expect(try await client.send(.push(token: tokenC.uppercased(), topic: "com.example.other", jwt: key.token())).status == 200)
            let device = try #require(emulator.device(token: tokenC))
            #expect(device.bundleID == "com.example.other")
            #expect(device.environment == .sandbox)
            #expect(device.isOnline)
        }
    }
}
