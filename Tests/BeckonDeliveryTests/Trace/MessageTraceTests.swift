@testable import BeckonDelivery
import BeckonProtocol
import BeckonStore
import Foundation
import Testing

/// A trace is the records in time order per device, nothing inferred: what each record becomes,
/// and the ties broken in the order things happen.
@Suite struct MessageTraceTests {
    static let t0 = Date(timeIntervalSince1970: 1_800_000_000)
    static func at(_ seconds: TimeInterval) -> Date { t0.addingTimeInterval(seconds) }

    static func device(_ id: String, user: String = "ann") -> Device {
        Device(appID: "chat", id: id, userID: user, bundleID: "com.example.chat", environment: .production, createdAt: t0, updatedAt: t0)
    }

    static func records(expiresAt: Date? = nil, pushes: [TracedPush] = [], receipts: [MessageReceipt] = [], reads: [MessageTraceRecords.Read] = [])
        -> MessageTraceRecords
    {
        MessageTraceRecords(
            message: Message(
                id: "m1", appID: "chat", kind: .message, payload: Data(), hints: nil, urgency: .normal, expiresAt: expiresAt,
                idempotencyKey: nil, createdAt: t0),
            positions: [MailboxPosition(userID: "ann", sequence: 7)], devices: [device("phone"), device("tablet")],
            pushes: pushes, receipts: receipts, reads: reads)
    }

    static func push(_ id: String, device: String = "phone", at seconds: TimeInterval, attempts: [PushAttempt] = [], wake: String? = nil, wakeAt: Date? = nil)
        -> TracedPush
    {
        TracedPush(
            id: id, device: DeviceRef(appID: "chat", deviceID: device), reason: "wake", strategy: "wake", pushType: "background",
            priority: 5, collapseID: nil, apnsID: id, messageCount: 1, createdAt: at(seconds), state: "sent", attempts: attempts,
            wake: wake, wakeLatency: nil, wakeAt: wakeAt)
    }

    func types(_ trace: MessageTrace, _ device: String) -> [TraceEvent.Kind] {
        trace.devices.first { $0.deviceId == device }?.events.map(\.type) ?? []
    }

    @Test func aMissedWakeComesBeforeTheEscalationDecidedAtTheSameInstant() {
        let records = Self.records(pushes: [
            Self.push("p1", at: 1, attempts: [PushAttempt(number: 1, at: Self.at(1.1), outcome: .sent, status: 200)], wake: "missed", wakeAt: Self.at(31)),
            Self.push("p2", at: 31, attempts: [PushAttempt(number: 1, at: Self.at(31.1), outcome: .sent, status: 200)]),
        ])
        let trace = MessageTrace(records, now: Self.at(60))
        #expect(types(trace, "phone") == [.stored, .push, .apns, .wakeMissed, .push, .apns])
        #expect(types(trace, "tablet") == [.stored], "every recipient device is listed, pushed or not")
        #expect(trace.devices.first?.events.first?.sequence == 7)
    }

    @Test func aDeadTokenIsSaidAtTheAnswerThatShowedIt() {
        let records = Self.records(pushes: [
            Self.push("p1", at: 1, attempts: [
                PushAttempt(number: 1, at: Self.at(1), outcome: .retry, status: 503, reason: "ServiceUnavailable"),
                PushAttempt(number: 2, at: Self.at(5), outcome: .failed, status: 410, reason: "Unregistered"),
            ]),
        ])
        let events = MessageTrace(records, now: Self.at(60)).devices[0].events
        #expect(events.map(\.type) == [.stored, .push, .apns, .apns, .tokenDead])
        #expect(events.last?.reason == "Unregistered" && events.last?.at == Self.at(5))
        #expect(events.filter { $0.type == .apns }.map(\.attempt) == [1, 2])
    }

    @Test func aReadIsHereOnOneDeviceAndElsewhereOnTheOthers() {
        let records = Self.records(
            receipts: [MessageReceipt(device: DeviceRef(appID: "chat", deviceID: "phone"), messageID: "m1", kind: .shown, at: Self.at(2))],
            reads: [MessageTraceRecords.Read(userID: "ann", deviceID: "tablet", at: Self.at(10))])
        let trace = MessageTrace(records, now: Self.at(60))
        #expect(types(trace, "phone") == [.stored, .shown, .readElsewhere])
        #expect(trace.devices.first { $0.deviceId == "phone" }?.events.last?.deviceId == "tablet")
        #expect(types(trace, "tablet") == [.stored, .read])
    }

    @Test func expiryIsSaidOnlyWhereTheMessageHadNotArrived() {
        let records = Self.records(
            expiresAt: Self.at(30),
            receipts: [MessageReceipt(device: DeviceRef(appID: "chat", deviceID: "phone"), messageID: "m1", kind: .synced, at: Self.at(3))])
        #expect(types(MessageTrace(records, now: Self.at(20)), "tablet") == [.stored], "not expired yet")
        let later = MessageTrace(records, now: Self.at(40))
        #expect(types(later, "tablet") == [.stored, .expired])
        #expect(types(later, "phone") == [.stored, .synced], "the phone had it")
    }

    @Test func aDeviceDeletedSinceKeepsItsPushesWithoutAUser() {
        let records = Self.records(pushes: [Self.push("p1", device: "old-phone", at: 1)])
        let trace = MessageTrace(records, now: Self.at(60))
        let old = trace.devices.first { $0.deviceId == "old-phone" }
        #expect(old?.userId == nil && old?.events.map(\.type) == [.push])
        #expect(trace.devices.map(\.deviceId) == ["old-phone", "phone", "tablet"])
    }
}
