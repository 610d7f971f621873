import BeckonClient
import BeckonClientNIO
import BeckonClientTestSupport
import BeckonJSON
import Foundation
import Testing

/// `BeckonApp`'s background push path against the real server: the push arrives, the app syncs
/// within its budget, notifies by message id, and completes once.
@Suite(.serialized) struct BeckonAppEndToEndTests {
    @Test func aWakePushSyncsAndCompletesWithNewData() async throws {
        try await ClientTestServer.with { server in
            let test = try TestStore()
            defer { test.remove() }
            let credential = try await server.device(user: "u1", device: "d1")
            let center = FakeNotificationCenter()
            let app = BeckonApp(
                configuration: BeckonApp.Configuration(endpoint: server.endpoint(credential)),
                store: try test.open(clock: SystemClock()),
                ports: BeckonApp.Ports(
                    notificationCenter: center, callReporter: FakeCallReporter(), backgroundTime: nil, clock: SystemClock(),
                    transport: NIOSyncTransport(), processSignal: nil),
                renderer: { NotificationContent(body: $0.payload?["text"]?.stringValue) })
            let first = try await server.post(to: ["u1"], text: "one")
            let second = try await server.post(to: ["u1"], text: "two")
            let results = ResultLog()
            app.handle(.didFinishLaunching(remoteNotification: nil))
            app.handle(.didReceiveRemoteNotification(
                ["aps": ["content-available": 1], "beckon": ["reason": "wake", "ids": .array([.string(second)])]],
                state: .background, completion: BackgroundCompletion { results.append($0) }))
            try await eventually("completed") { !results.values.isEmpty }
            #expect(results.values == [.newData])
            #expect(await center.deliveredIdentifiers() == [first, second])
            #expect(await center.delivered[second]?.body == "two")
            try await eventually("acknowledged") { await server.lastAck("d1") == 2 }
        }
    }
}

final class ResultLog: @unchecked Sendable {
    private let lock = NSLockBox()
    private var _values: [BackgroundFetchResult] = []
    var values: [BackgroundFetchResult] { lock.run { _values } }
    func append(_ value: BackgroundFetchResult) { lock.run { _values.append(value) } }
}
