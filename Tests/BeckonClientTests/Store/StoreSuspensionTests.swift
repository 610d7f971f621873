@testable import BeckonClient
import BeckonClientTestSupport
import BeckonJSON
import BeckonProtocol
import Foundation
import Testing

/// The store suspended as on iOS (GRDB takes no lock until resumed: 0xdead10cc, apns.md E.9).
/// GRDB's suspension notification reaches every suspending store of the process, so these run
/// one at a time and no other suite opens a store with `observesSuspension`.
@Suite(.serialized) struct StoreSuspensionTests {
    @Test func aVoIPPushAfterTheAppWasSuspendedRingsWithASession() async throws {
        let harness = try AppHarness.make(observesSuspension: true)
        defer { harness.test.remove() }
        harness.app.handle(.didBecomeActive)
        let foreground = try await harness.serve(0, lastSequence: 0)
        try await eventually("foreground session") { await harness.app.foregroundSession != nil }
        harness.app.handle(.willResignActive)
        harness.app.handle(.didEnterBackground)
        try await harness.closeAfterBye(foreground)
        try await eventually("background task ended") { harness.backgroundTime.openTasks == 0 }
        // PushKit resumes the app for a call: its end must still reach it (rule 6), so the
        // ringing session needs the store again (GRDB: resume in every entry point).
        let callID = "0b3c9a8e-8a77-4f53-b1f4-2f3f4e0e8c11"
        let payload: JSONValue = ["beckon": ["reason": "call-voip", "call": .string(callID), "ids": [.string(callID)]]]
        harness.app.receiveVoIPPush(payload) { .incoming($0) }
        let ringing = try await harness.serve(1, lastSequence: 0)
        ringing.server(.callEnded(callID: callID, outcome: .answeredElsewhere))
        try await harness.clock.advance(by: .seconds(1), until: "bye") { ringing.sent.contains(.bye) }
        ringing.serverClose(1000)
        #expect(harness.reporter.ends.map(\.outcome) == [.answeredElsewhere], "it stopped ringing")
    }

    @Test func aRenewalThatFailsForAMomentKeepsTheLease() async throws {
        let test = try TestStore()
        defer { test.remove() }
        let clock = ManualClock()
        let store = try test.open(clock: clock, observesSuspension: true)
        defer { store.resume() }
        let lock = LeaseLock(store: store, holder: LeaseHolder(role: .app), clock: clock)
        let writer = try await lock.acquire(timeout: .seconds(1))
        // A renewal fails (here the store is suspended for a moment), well inside the lease's
        // 500 ms: nobody else can have it, so it is not lost.
        store.suspend()
        try await clock.advance(by: .milliseconds(50), until: "a renewal failed") { clock.now() >= Date(timeIntervalSince1970: 1_700_000_000.2) }
        #expect(writer.isHeld)
        store.resume()
        try await clock.advance(by: .milliseconds(50), until: "renewed again") { clock.now() >= Date(timeIntervalSince1970: 1_700_000_000.4) }
        #expect(writer.isHeld)
        #expect(try store.leaseRow(key: "writer")?.holder == lock.holder.name)
        await writer.release()
    }
}

extension StoreSuspensionTests {
    @Test func theExtensionSuspendsTheStoreBeforeHandingOverItsLastContent() async throws {
        let test = try TestStore()
        defer { test.remove() }
        let clock = ManualClock()
        let store = try test.open(clock: clock, observesSuspension: true)
        defer { store.resume() }
        let fetcher = FakeMessageFetcher()
        let seen = Locked<[Bool]>([])
        let handler = NotificationServiceHandler(fetcher: fetcher, clock: clock, store: store)
        let push = IncomingNotification(
            identifier: "m1", payload: ["aps": ["alert": ["loc-key": "BECKON_NEW_MESSAGE"]], "beckon": ["reason": "alert", "ids": ["m1"]]])
        let outcome = await withCheckedContinuation { continuation in
            handler.receive(push) { outcome in
                // What iOS may freeze the moment this returns: a store that takes no lock.
                seen.withLock { $0.append((try? store.takeLease(key: "probe", holder: LeaseHolder(role: .extension), duration: .seconds(1))) == nil) }
                continuation.resume(returning: outcome)
            }
        }
        #expect(outcome != .suppressed)
        #expect(seen.withLock { $0 } == [true], "suspended before the content went")
        // The next push resumes it.
        _ = await handler.handle(push)
        store.resume()
    }
}
