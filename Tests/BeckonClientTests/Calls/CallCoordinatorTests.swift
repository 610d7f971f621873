@testable import BeckonClient
import BeckonClientTestSupport
import BeckonJSON
import BeckonProtocol
import BeckonSeal
import Foundation
import Testing

/// Every VoIP push ends in a reported call (seed 003; apns.md E.6).
@Suite struct CallCoordinatorTests {
    static let callID = "0b3c9a8e-8a77-4f53-b1f4-2f3f4e0e8c11"
    static let push: JSONValue = [
        "aps": [:], "beckon": ["reason": "call-voip", "call": .string(callID), "ids": [.string(callID)], "hints": ["title": "Anna"]],
    ]

    @Test func theHandlersReportIsMadeBeforeReturning() {
        let reporter = FakeCallReporter()
        let calls = CallCoordinator(store: nil, reporter: reporter)
        let report = calls.receiveVoIPPush(Self.push) { push in
            #expect(push.call.uuid == UUID(uuidString: Self.callID))
            return .incoming(push)
        }
        #expect(report.kind == .incoming && report.display.callerName == "Anna")
        #expect(reporter.reports == [report.call])
        #expect(calls.ringingCalls.map(\.callID) == [Self.callID])
    }

    @Test func aCallTheStoreKnowsEndedIsEndedRightAfterItsReport() async throws {
        try await TestStore.withWriter { store, writer, _ in
            let reporter = FakeCallReporter()
            let calls = CallCoordinator(store: store, reporter: reporter)
            calls.callEnded(Self.callID, outcome: .cancelled, as: writer)
            // A new process (the app relaunched by PushKit) reports first — the store may need
            // opening, which must not delay the report — then learns it from the store.
            let relaunched = CallCoordinator(store: store, reporter: reporter)
            let report = relaunched.receiveVoIPPush(Self.push) { .incoming($0) }
            #expect(reporter.reports == [report.call])
            try await eventually("ended from the store") { !reporter.ends.isEmpty }
            #expect(reporter.ends.map(\.outcome) == [.cancelled])
            #expect(relaunched.ringingCalls.isEmpty)
        }
    }

    @Test func aCallThisProcessHeardEndedIsReportedAndEndedWithoutAskingTheApp() {
        let reporter = FakeCallReporter()
        let calls = CallCoordinator(store: nil, reporter: reporter)
        calls.callEnded(Self.callID, outcome: .declined, as: nil)
        let report = calls.receiveVoIPPush(Self.push) { _ in
            Issue.record("the handler is not asked")
            fatalError()
        }
        #expect(report.kind == .alreadyEnded(.declined))
        #expect(reporter.ends.map(\.outcome) == [.declined], "shown, then ended once CallKit has it")
    }

    @Test func aPushThatNamesNoCallIsStillReported() {
        let reporter = FakeCallReporter()
        let calls = CallCoordinator(store: nil, reporter: reporter)
        let report = calls.receiveVoIPPush(["aps": [:]]) { .incoming($0) }
        #expect(report.kind == .alreadyEnded(.cancelled))
        #expect(reporter.reports.count == 1)
    }

    @Test func callEndedEndsOnlyACallThatRings() {
        let reporter = FakeCallReporter()
        let calls = CallCoordinator(store: nil, reporter: reporter)
        calls.callEnded("unknown", outcome: .missed, as: nil)
        #expect(reporter.ends.isEmpty)
        calls.receiveVoIPPush(Self.push) { .incoming($0) }
        calls.callEnded(Self.callID, outcome: .answeredElsewhere, as: nil)
        #expect(reporter.ends.map(\.outcome) == [.answeredElsewhere])
        #expect(calls.ringingCalls.isEmpty)
        // Heard of before its push: the push is reported ended.
        #expect(calls.receiveVoIPPush(Self.push) { .incoming($0) }.kind == .alreadyEnded(.answeredElsewhere))
    }

    @Test func sealedHintsAreOpenedWithTheDevicesKey() throws {
        let key = Data(repeating: 7, count: 32)
        let sealed = try ContentSeal.seal(SealedContent(messageID: Self.callID, title: "Bob"), key: key)
        let payload: JSONValue = ["beckon": ["reason": "call-voip", "call": .string(Self.callID), "sealed": .string(sealed)]]
        let calls = CallCoordinator(store: nil, reporter: FakeCallReporter(), sealKey: key)
        #expect(calls.receiveVoIPPush(payload) { .incoming($0) }.display.callerName == "Bob")
    }

    @Test func callIdsThatAreNotUUIDsGetAStableUUID() {
        #expect(CallIdentity(callID: "call-42").uuid == CallIdentity(callID: "call-42").uuid)
        #expect(CallIdentity(callID: "call-42").uuid != CallIdentity(callID: "call-43").uuid)
    }

    @Test func pushKitsCompletionWaitsForCallKitsAnswer() {
        let reporter = FakeCallReporter()
        reporter.answersAtOnce = false
        let calls = CallCoordinator(store: nil, reporter: reporter)
        let completed = Flag()
        calls.receiveVoIPPush(Self.push, handler: { .incoming($0) }, completion: { completed.set() })
        #expect(reporter.reports.count == 1, "reported before the handler returned")
        #expect(!completed.isSet, "PushKit's completion comes after CallKit's (apns.md E.9)")
        reporter.answerPending()
        #expect(completed.isSet)
        #expect(calls.ringingCalls.map(\.callID) == [Self.callID])
    }

    @Test func aCallRefusedByDoNotDisturbIsNotRinging() {
        let reporter = FakeCallReporter()
        reporter.refusal = .doNotDisturb
        let calls = CallCoordinator(store: nil, reporter: reporter)
        let completed = Flag()
        calls.receiveVoIPPush(Self.push, handler: { .incoming($0) }, completion: { completed.set() })
        #expect(reporter.reports.count == 1)
        #expect(completed.isSet)
        #expect(calls.ringingCalls.isEmpty, "CallKit refused it: nothing rings here")
        // A push that CallKit already has (the same call again) leaves the ringing call alone.
        reporter.refusal = nil
        calls.receiveVoIPPush(Self.push) { .incoming($0) }
        reporter.refusal = .alreadyReported
        calls.receiveVoIPPush(Self.push) { .incoming($0) }
        #expect(calls.ringingCalls.map(\.callID) == [Self.callID])
    }
}
