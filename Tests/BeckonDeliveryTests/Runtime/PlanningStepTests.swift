@testable import BeckonDelivery
import BeckonProtocol
import BeckonStore
import Foundation
import Logging
import Metrics
import NIOConcurrencyHelpers
import Testing

/// A planning step reads the store and decides; it writes nothing: the driver saves what it
/// decided, so a step planned again after a conflict has left no trace.
@Suite struct PlanningStepTests {
    struct NobodyConnected: DevicePresence {
        func mayBeConnected(_ device: DeviceRef) async -> Bool { false }
        func connectedElsewhere(_ device: DeviceRef, besides session: String) async -> Bool { false }
        func liveSessions(_ devices: [DeviceRef]) async -> [DeviceRef: LiveSession] { [:] }
    }

    @Test func aMessageToAnAwayDeviceIsDecidedAndNothingIsWritten() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(UUID().uuidString).path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let store = try SQLiteStore(path: directory + "/beckon.sqlite")
        _ = try await store.createApp(
            App(id: "chat", bundleID: "com.example.chat", teamID: "TEAM123456", environments: [.production]))
        let phone = try await store.registerDevice(DeviceRegistration(
            appID: "chat", deviceID: "phone", userID: "alice", bundleID: "com.example.chat", environment: .production,
            pushToken: String(repeating: "ab", count: 32)))
        let appended = try await store.appendMessages(appID: "chat", [NewMessage(recipients: ["alice"])])
        let context = PlanningContext(
            now: Date(), store: store, presence: NobodyConnected(), policies: [:], bundleIDs: ["chat": "com.example.chat"],
            cache: NIOLockedValueBox([:]), metrics: DeliveryMetrics(factory: NOOPMetricsHandler.instance),
            logger: Logger(label: "test"))
        let event = DeliveryEvent.messageAppended(appended[0].message, users: [UserRef(appID: "chat", userID: "alice")])

        var step = try await PlanningStep(context: context, devicesFor: [event])
        try await step.apply(event)
        let planned = try step.decided()

        #expect(planned.batch.pushes.map(\.device) == [phone.ref])
        #expect(planned.batch.pushes.first?.notification.topic == "com.example.chat")
        #expect(planned.batch.states.map(\.device) == [phone.ref])
        #expect(planned.planners[phone.ref]?.version == 1, "remembered at the version its save makes")
        #expect(try await store.deliveryStates([phone.ref]).isEmpty)
        #expect(try await store.pushRecords(appID: "chat", since: .distantPast).isEmpty)
    }
}
