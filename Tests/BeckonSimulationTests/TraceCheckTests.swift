import BeckonDelivery
import BeckonProtocol
import BeckonStore
import DeviceSimulator
import Foundation
import Testing

@testable import BeckonSimulation

/// The trace check alone: a trace built from store records as the server builds it, against a
/// timeline and an emulator record made up for each case.
@Suite struct TraceCheckTests {
    static let t0 = Date(timeIntervalSince1970: 1_800_000_000)
    static let phone = DeviceRef(appID: "chat", deviceID: "phone")

    static func device(_ id: String) -> Device {
        Device(appID: "chat", id: id, userID: "ann", bundleID: "com.example.chat", environment: .sandbox, createdAt: t0, updatedAt: t0)
    }

    static func push(_ id: String, apnsID: String, reason: String, sent: Bool = true) -> TracedPush {
        TracedPush(
            id: id, device: phone, reason: reason, strategy: "wake", pushType: reason == "wake" ? "background" : "alert",
            priority: reason == "wake" ? 5 : 10, collapseID: nil, apnsID: apnsID, messageCount: 1, createdAt: t0,
            state: sent ? "sent" : "pending",
            attempts: sent ? [PushAttempt(number: 1, at: t0.addingTimeInterval(1), outcome: .sent, status: 200)] : [])
    }

    /// m1 to ann (phone, ipad): woken, escalated, shown, tapped, synced.
    static func trace(
        pushes: [TracedPush] = [push("p1", apnsID: "a1", reason: "wake"), push("p2", apnsID: "a2", reason: "unreachable-alert")],
        receipts: [ReceiptKind] = [.synced, .shown, .opened], reads: [MessageTraceRecords.Read] = []
    ) -> MessageTrace {
        MessageTrace(
            MessageTraceRecords(
                message: Message(
                    id: "m1", appID: "chat", kind: .message, payload: Data(), hints: nil, urgency: .normal, expiresAt: nil,
                    idempotencyKey: nil, createdAt: t0),
                positions: [MailboxPosition(userID: "ann", sequence: 1)], devices: [device("phone"), device("ipad")],
                pushes: pushes,
                receipts: receipts.map { MessageReceipt(device: phone, messageID: "m1", kind: $0, at: t0.addingTimeInterval(60)) },
                reads: reads),
            now: t0.addingTimeInterval(100))
    }

    static let accepted = [
        AcceptedPush(device: "phone", apnsID: "a1", type: "background", reason: "wake", messages: ["m1"]),
        AcceptedPush(device: "phone", apnsID: "a2", type: "alert", reason: "unreachable-alert", messages: ["m1"]),
    ]

    static func on(_ time: Double, _ what: TimelineEvent.What, device: String = "phone") -> TimelineEvent {
        TimelineEvent(time: time, device: device, what: what)
    }

    static let shownTappedStored: [TimelineEvent] = [
        on(1, .appState(.killedByUser)),
        on(80, .notificationShown(identifier: "m1", messages: ["m1"], text: "Call me")),
        on(150, .notificationRemoved(identifier: "m1", why: "tapped")),
        on(150, .appState(.foreground)),
        on(152, .messageStored(id: "m1")),
    ]

    static func check(
        trace: MessageTrace = trace(), events: [TimelineEvent] = shownTappedStored, accepted: [AcceptedPush] = accepted,
        phone: PhoneReceipts = PhoneReceipts(inLedger: ["m1"]), reads: [String: Set<String>] = [:]
    ) -> TraceCheck {
        TraceCheck(
            messages: ["m1"], traces: ["m1": trace], events: events, accepted: accepted, phones: ["phone": phone], reads: reads)
    }

    @Test func aTraceThatTellsWhatHappenedHasNoFinding() {
        let check = Self.check()
        #expect(check.findings().isEmpty)
        #expect(check.shownStatuses() == ["m1": ["phone": .reported]])
    }

    @Test func everyPushAPNsAcceptedIsInTheTraceAndNoOther() {
        let extra = Self.accepted + [AcceptedPush(device: "phone", apnsID: "a3", type: "alert", reason: "repush", messages: ["m1"])]
        #expect(Self.check(accepted: extra).findings().map(\.problem) == [
            "APNs accepted repush push a3; the trace has no push with that apns-id"
        ])
        let findings = Self.check(accepted: [Self.accepted[0]]).findings().map(\.problem)
        #expect(findings == ["the trace says APNs accepted push a2; the emulator has no such push for this phone"])
        // Decided and never sent: nothing for APNs to have.
        let pending = Self.trace(pushes: [Self.push("p1", apnsID: "a1", reason: "wake", sent: false)])
        #expect(Self.check(trace: pending, accepted: []).findings().isEmpty)
        #expect(
            Self.check(trace: pending, accepted: [Self.accepted[0]]).findings().map(\.problem) == [
                "APNs accepted push a1; the trace has no apns sent for it"
            ])
    }

    @Test func aShownNotYetReportedIsSaidAsSuchAndOnlyWhileItCanBe() {
        let unreported = Self.trace(receipts: [.synced, .opened])
        // Queued on the phone: no session sent it yet.
        let queued = Self.check(trace: unreported, phone: PhoneReceipts(pending: ["m1": [.shown]], inLedger: ["m1"]))
        #expect(queued.shownStatuses()["m1"]?["phone"] == .queued && queued.findings().isEmpty)
        // Shown by iOS, the app never back in front: iOS has not told it.
        let away = Array(Self.shownTappedStored.prefix(2))
        let awaiting = Self.check(trace: Self.trace(receipts: []), events: away, phone: PhoneReceipts())
        #expect(awaiting.shownStatuses()["m1"]?["phone"] == .awaitingApp && awaiting.findings().isEmpty)
        // The app came to the front after it, or the ledger knows it: lost.
        let cameBack = Self.check(trace: unreported, phone: PhoneReceipts())
        #expect(cameBack.shownStatuses()["m1"]?["phone"] == .lost)
        #expect(cameBack.findings().count == 1)
        #expect(Self.check(trace: Self.trace(receipts: []), events: away).shownStatuses()["m1"]?["phone"] == .lost)
    }

    @Test func aShownTheTimelineNeverShowedIsAFindingUnlessTheAppInFrontDeclinedTheExtensionsAlert() {
        let never: [TimelineEvent] = [Self.on(10, .appState(.foreground)), Self.on(12, .messageStored(id: "m1"))]
        let trace = Self.trace(receipts: [.synced, .shown])
        let unfounded = Self.check(trace: trace, events: never)
        #expect(unfounded.shownStatuses()["m1"]?["phone"] == .unfounded)
        #expect(unfounded.findings().map(\.problem) == ["the trace says shown; the timeline never showed it"])
        let declined = Self.check(
            trace: trace, events: never + [Self.on(11, .extensionFinished(push: "A2", outcome: "fallback-lowMemory"))])
        #expect(declined.shownStatuses()["m1"]?["phone"] == .declinedInFront && declined.findings().isEmpty)
        // The same run with the app in the background: iOS would have shown it.
        let away = [Self.on(10, .appState(.background)), Self.on(11, .extensionFinished(push: "a2", outcome: "rewritten"))]
        #expect(Self.check(trace: trace, events: away).shownStatuses()["m1"]?["phone"] == .unfounded)
    }

    @Test func tapsSyncsAndReadsAreInTheTrace() {
        let bare = Self.trace(receipts: [.shown])
        #expect(Set(Self.check(trace: bare).findings().map(\.problem)) == [
            "tapped on the timeline; no opened receipt queued or in the trace", "stored on the phone; the trace has no synced",
        ])
        let queued = PhoneReceipts(pending: ["m1": [.opened]], inLedger: ["m1"])
        #expect(Self.check(trace: Self.trace(receipts: [.shown, .synced]), phone: queued).findings().isEmpty)
        // Read on the iPad: read there, read elsewhere on the phone.
        let readOnIPad = Self.trace(reads: [MessageTraceRecords.Read(userID: "ann", deviceID: "ipad", at: Self.t0.addingTimeInterval(90))])
        #expect(Self.check(trace: readOnIPad, reads: ["ipad": ["m1"]]).findings().isEmpty)
        let findings = Self.check(trace: Self.trace(), reads: ["ipad": ["m1"]]).findings()
        #expect(Set(findings.map(\.description)) == [
            "m1 on ipad: read on this phone; the trace has no read", "m1 on phone: read on ipad; the trace has no read-elsewhere naming it",
        ])
    }
}
