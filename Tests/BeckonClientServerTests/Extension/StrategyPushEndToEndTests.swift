import APNSCore
import APNSEmulator
import BeckonClient
import BeckonClientNIO
import BeckonClientTestSupport
import BeckonJSON
import BeckonProtocol
import BeckonStore
import Foundation
import Testing

/// The `service-extension` and `filtering` strategies from a post to what the user sees: the
/// node decides and sends the push, the built-in emulator receives it, and the SDK's notification
/// service extension handles the very payload Apple would have delivered (docs/design.md,
/// "Delivery strategies"). The simulator plays the same paths with iOS's timing
/// (`beckon simulate service-extension`, `filtering`).
@Suite(.serialized) struct StrategyPushEndToEndTests {
    static let phoneToken = String(repeating: "5e", count: 32)
    static let oldPhoneToken = String(repeating: "6f", count: 32)

    @Test func aServiceExtensionAlertCarriesNoTextAndItsExtensionShowsTheMessage() async throws {
        try await ClientTestServer.with(configure: { $0.apps[0].delivery.strategy = .serviceExtension }) { server in
            let device = try await ClientTestDevice(server: server, user: "alice", device: "phone", role: .extension)
            defer { device.remove() }
            try await server.pushTarget("phone", token: Self.phoneToken, extension: true)
            // An install without an extension cannot rewrite an alert: it is woken instead.
            try await server.pushTarget("old-phone", token: Self.oldPhoneToken, extension: false)
            let id = try await server.post(to: ["alice"], text: "x", notification: ["title": "Anna", "body": "Lunch at one?"])

            let push = try await server.push(to: Self.phoneToken)
            #expect(push.pushType == .alert)
            #expect(push.priority == 10)
            #expect(!push.payloadString.contains("Lunch"), "rule 1: no content through Apple")
            let payload = try JSONParser.parse(push.payload)
            #expect(payload["aps"]?["mutable-content"] == .int(1))
            #expect(payload["aps"]?["alert"]?["loc-key"]?.stringValue == "BECKON_NEW_MESSAGE")
            #expect(payload["beckon"]?["ids"] == .array([.string(id)]))
            let woken = try await server.push(to: Self.oldPhoneToken)
            #expect(woken.pushType == .background)

            let handler = NotificationServiceHandler(fetcher: device.fetcher, clock: SystemClock())
            let outcome = await handler.handle(IncomingNotification(identifier: push.apnsID, payload: payload))
            guard case .rewritten(let content) = outcome else {
                Issue.record("the extension did not rewrite the alert: \(outcome)")
                return
            }
            #expect(content.title == "Anna")
            #expect(content.body == "Lunch at one?")
        }
    }

    @Test func aFilteringExtensionSyncsShowsWhatIsNewAndSuppressesWhatWasShown() async throws {
        try await ClientTestServer.with(configure: { $0.apps[0].delivery.strategy = .filtering }) { server in
            let device = try await ClientTestDevice(server: server, user: "alice", device: "phone", role: .extension)
            defer { device.remove() }
            try await server.pushTarget("phone", token: Self.phoneToken, extension: true, filtering: true)
            let id = try await server.post(to: ["alice"], text: "Seen once")

            // Filtering: a priority-10 alert that wakes the extension, which may hide it (apns.md E.4).
            let push = try await server.push(to: Self.phoneToken)
            #expect(push.pushType == .alert)
            #expect(push.priority == 10)
            let payload = try JSONParser.parse(push.payload)
            #expect(payload["aps"]?["mutable-content"] == .int(1))
            #expect(!push.payloadString.contains("Seen once"))

            // The extension's own sync presents nothing: what it shows is the handler's answer.
            let sync = ExtensionSync(
                endpoint: device.endpoint, store: device.store, lock: device.lock, transport: NIOSyncTransport(),
                clock: device.clock)
            let handler = NotificationServiceHandler(
                configuration: .init(canSuppress: true, syncDeadline: .seconds(10)), fetcher: device.fetcher,
                clock: device.clock, store: device.store, lock: device.lock,
                renderer: { NotificationContent(body: $0.payload?["text"]?.stringValue) }, sync: sync)
            let notification = IncomingNotification(identifier: push.apnsID, payload: payload)
            let first = await handler.handle(notification)
            guard case .rewritten(let content) = first else {
                Issue.record("the first delivery should show the synced message: \(first)")
                return
            }
            #expect(content.body == "Seen once")
            #expect(try device.store.message(id: id) != nil, "the extension's sync stored it")
            // Apple delivers the same push again (or a re-push names it): already shown, so hidden.
            #expect(await handler.handle(notification) == .suppressed)
        }
    }
}

extension ClientTestServer {
    /// Gives a device of `chat` a push token and the capabilities its strategy needs.
    func pushTarget(
        _ device: String, user: String = "alice", token: String, extension: Bool, filtering: Bool = false
    ) async throws {
        try await store.registerDevice(DeviceRegistration(
            appID: "chat", deviceID: device, userID: user, bundleID: "com.example.chat", environment: .production,
            pushToken: token,
            capabilities: DeviceCapabilities(
                notificationServiceExtension: `extension`, filtering: filtering, backgroundModes: ["remote-notification"])))
    }

    /// The first push the built-in emulator accepted for the token, waiting up to 10 s for it.
    func push(to token: String) async throws -> APNSEmulatorNotification {
        let emulator = try #require(node.emulator)
        let deadline = ContinuousClock.now + .seconds(10)
        while ContinuousClock.now < deadline {
            if let push = emulator.deliveries(to: token).first { return push }
            try await Task.sleep(for: .milliseconds(10))
        }
        throw TimedOut(what: "a push to \(token.prefix(8))…")
    }
}
