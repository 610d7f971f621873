import BeckonJSON
import Testing

@testable import DeviceSimulator

/// The iOS rules, one at a time, without a server or a clock (docs/simulator.md, "The iOS model").
@Suite struct SimulatedPhoneTests {
    static func background(_ id: String, priority: Int = 5) -> DevicePush {
        DevicePush(
            id: id, type: "background", priority: priority, collapseID: nil,
            payload: ["aps": ["content-available": 1], "beckon": ["reason": "wake", "ids": ["m1"]]])
    }

    static func alert(_ id: String, collapse: String? = nil, mutable: Bool = false, badge: Int? = nil) -> DevicePush {
        var aps: [String: JSONValue] = ["alert": ["loc-key": "BECKON_NEW_MESSAGE"]]
        if mutable { aps["mutable-content"] = 1 }
        if let badge { aps["badge"] = .int(badge) }
        return DevicePush(
            id: id, type: "alert", priority: 10, collapseID: collapse,
            payload: ["aps": .object(aps), "beckon": ["reason": "alert", "ids": .array([.string(collapse ?? id)])]])
    }

    static func voip(_ id: String) -> DevicePush {
        DevicePush(id: id, type: "voip", priority: 10, collapseID: nil, payload: ["beckon": ["reason": "call", "call": "c1"]])
    }

    /// A phone whose app was opened once and then left for the home screen and suspended.
    static func suspendedPhone(traits: AppTraits = AppTraits(), policy: IOSPolicy = IOSPolicy()) -> SimulatedPhone {
        var phone = SimulatedPhone(traits: traits, policy: policy)
        _ = phone.handle(.user(.launch), at: 0)
        _ = phone.handle(.user(.home), at: 1)
        _ = phone.handle(.tick, at: 100)
        return phone
    }

    static func records(_ actions: [PhoneAction]) -> [TimelineEvent.What] {
        actions.compactMap { if case .record(let what) = $0 { what } else { nil } }
    }

    @Test func aColdLaunchRunsTheLaunchCallbacksInUIKitsOrder() {
        var phone = SimulatedPhone(traits: AppTraits())
        let actions = phone.handle(.user(.launch), at: 0)
        #expect(
            actions.filter { if case .record = $0 { false } else { true } } == [
                .startApp, .lifecycle(.didFinishLaunching(remoteNotification: nil)), .lifecycle(.didBecomeActive),
            ])
        #expect(phone.app == .foreground)
    }

    @Test func leavingTheFrontSuspendsTheAppAfterItsWorkEnds() {
        var phone = SimulatedPhone(traits: AppTraits())
        _ = phone.handle(.user(.launch), at: 0)
        _ = phone.handle(.backgroundTaskBegan(1), at: 1)
        _ = phone.handle(.user(.home), at: 2)
        #expect(phone.app == .background)
        #expect(phone.nextDeadline == 32)
        // Its last task ended: suspended at once, the worst case Apple allows (apns.md E.9).
        let actions = phone.handle(.backgroundTaskEnded(1), at: 3)
        #expect(actions.contains(.suspendApp))
        #expect(phone.app == .suspended)
    }

    @Test func leavingTheFrontWithNothingToFinishSuspendsAfterTheGrace() {
        var phone = SimulatedPhone(traits: AppTraits())
        _ = phone.handle(.user(.launch), at: 0)
        _ = phone.handle(.user(.home), at: 2)
        #expect(phone.nextDeadline == 7)
        #expect(phone.handle(.tick, at: 7).contains(.suspendApp))
    }

    @Test func aBackgroundPushResumesASuspendedAppWithThirtySecondsToComplete() {
        var phone = Self.suspendedPhone()
        let actions = phone.handle(.pushArrived(Self.background("A")), at: 200)
        #expect(actions.contains(.resumeApp))
        #expect(actions.contains(.remoteNotification(Self.background("A"), state: .background, token: 1)))
        #expect(phone.app == .background)
        // Called in time: no violation, and the app is suspended at once (apns.md E.9).
        let after = phone.handle(.completionCalled(token: 1, result: "newData"), at: 205)
        #expect(after.contains(.suspendApp))
        #expect(phone.app == .suspended)
    }

    @Test func anAppSuspendedWhileATransactionHoldsALockIsKilled() {
        var phone = Self.suspendedPhone()
        let records = Self.records(phone.handle(.lockHeldWhenSuspended, at: 200))
        #expect(records.contains(.appKilled(why: "0xdead10cc")))
        #expect(records.contains { if case .violation(.lockHeldWhenSuspended, _) = $0 { true } else { false } })
        #expect(phone.app == .notRunning)
    }

    @Test func aBackgroundTaskLeftOpenByItsExpirationHandlerGetsTheAppKilled() {
        var phone = SimulatedPhone(traits: AppTraits())
        _ = phone.handle(.user(.launch), at: 0)
        _ = phone.handle(.backgroundTaskBegan(1), at: 1)
        _ = phone.handle(.user(.home), at: 2)
        let expiry = phone.handle(.tick, at: 32)
        #expect(expiry.contains(.expireBackgroundTasks([1])))
        let records = Self.records(phone.handle(.backgroundTasksLeftOpen([1]), at: 32))
        #expect(records.contains(.appKilled(why: "background-task-not-ended")))
        #expect(records.contains { if case .violation(.backgroundTaskNotEnded, _) = $0 { true } else { false } })
    }

    @Test func protectedDataIsUnreadableFromARestartUntilTheFirstUnlock() {
        var phone = SimulatedPhone(traits: AppTraits(voip: true))
        _ = phone.handle(.user(.launch), at: 0)
        #expect(phone.handle(.user(.reboot), at: 10).contains(.setProtectedData(available: false)))
        #expect(phone.lockedSinceBoot)
        // VoIP still launches the app (apns.md E.9: undocumented, but it happens).
        let voip = phone.handle(.pushArrived(Self.voip("C")), at: 20)
        #expect(voip.contains(.voip(Self.voip("C"))))
        #expect(phone.lockedSinceBoot)
        #expect(phone.handle(.user(.unlock), at: 30).contains(.setProtectedData(available: true)))
        #expect(!phone.lockedSinceBoot)
    }

    @Test func anExtensionKilledForItsMemoryShowsThePushsOwnText() {
        var phone = SimulatedPhone(traits: AppTraits(serviceExtension: true))
        let push = Self.alert("A", mutable: true)
        _ = phone.handle(.pushArrived(push), at: 1)
        let records = Self.records(phone.handle(.extensionFinished(push: "A", .overMemory), at: 2))
        #expect(records.contains(.extensionFinished(push: "A", outcome: "memory-limit")))
        #expect(records.contains { if case .violation(.extensionOverMemory, _) = $0 { true } else { false } })
        #expect(phone.notifications.map(\.identifier) == [push.identifier])
    }

    @Test func aLateCompletionHandlerGetsTheAppKilled() {
        var phone = Self.suspendedPhone()
        _ = phone.handle(.pushArrived(Self.background("A")), at: 200)
        let records = Self.records(phone.handle(.tick, at: 230))
        #expect(records.contains(.appKilled(why: "late-completion")))
        #expect(records.contains { if case .violation(.lateCompletion, _) = $0 { true } else { false } })
        #expect(phone.app == .notRunning)
    }

    @Test func aBackgroundPushLaunchesAnAppThatIsNotRunningWithTheLaunchOptions() {
        var phone = SimulatedPhone(traits: AppTraits())
        let push = Self.background("A")
        let actions = phone.handle(.pushArrived(push), at: 0)
        #expect(actions.contains(.startApp))
        #expect(actions.contains(.lifecycle(.didFinishLaunching(remoteNotification: push.payload))))
        #expect(phone.app == .background)
    }

    @Test func aForceQuitAppIsNotWokenAndTheHeldPushIsDiscarded() {
        var phone = Self.suspendedPhone(policy: IOSPolicy(backgroundLaunchesPerHour: 1, backgroundBurst: 1))
        _ = phone.handle(.pushArrived(Self.background("A")), at: 200)
        _ = phone.handle(.completionCalled(token: 1, result: "noData"), at: 201)
        _ = phone.handle(.tick, at: 300)
        _ = phone.handle(.pushArrived(Self.background("B")), at: 301)
        #expect(phone.heldBackground?.id == "B")
        let quit = Self.records(phone.handle(.user(.forceQuit), at: 302))
        #expect(quit.contains(.pushDiscarded(push: "B", why: "force-quit")))
        let after = Self.records(phone.handle(.pushArrived(Self.background("C")), at: 300))
        #expect(after == [.pushDiscarded(push: "C", why: "force-quit")])
        #expect(phone.app == .killedByUser)
    }

    @Test func overTheBudgetOnlyTheNewestPushIsHeldAndItRunsWhenTheBudgetRefills() {
        var phone = Self.suspendedPhone(policy: IOSPolicy(backgroundLaunchesPerHour: 1, backgroundBurst: 1))
        _ = phone.handle(.pushArrived(Self.background("A")), at: 200)
        _ = phone.handle(.completionCalled(token: 1, result: "noData"), at: 201)
        _ = phone.handle(.tick, at: 300)
        #expect(phone.app == .suspended)
        _ = phone.handle(.pushArrived(Self.background("B")), at: 400)
        let replaced = Self.records(phone.handle(.pushArrived(Self.background("C")), at: 500))
        #expect(replaced == [.pushDiscarded(push: "B", why: "replaced"), .pushHeld(push: "C", by: .ios)])
        // One launch an hour: room again an hour after the first.
        #expect(phone.nextDeadline == 3800)
        let later = phone.handle(.tick, at: 3800)
        #expect(later.contains(.remoteNotification(Self.background("C"), state: .background, token: 2)))
    }

    @Test func openingTheAppDeliversTheHeldPushAtOnce() {
        var phone = Self.suspendedPhone(policy: IOSPolicy(backgroundLaunchesPerHour: 0, backgroundBurst: 1))
        _ = phone.handle(.pushArrived(Self.background("A")), at: 200)
        _ = phone.handle(.completionCalled(token: 1, result: "noData"), at: 201)
        _ = phone.handle(.tick, at: 300)
        _ = phone.handle(.pushArrived(Self.background("B")), at: 400)
        #expect(phone.nextDeadline == nil)
        let actions = phone.handle(.user(.launch), at: 500)
        #expect(actions.contains(.remoteNotification(Self.background("B"), state: .active, token: 2)))
    }

    @Test func afterARestartBackgroundLaunchesWaitForTheDeferral() {
        var phone = Self.suspendedPhone()
        _ = phone.handle(.user(.reboot), at: 200)
        #expect(phone.app == .notLaunchedSinceReboot)
        #expect(Self.records(phone.handle(.pushArrived(Self.background("A")), at: 210)) == [.pushHeld(push: "A", by: .ios)])
        #expect(phone.nextDeadline == 500)
        #expect(phone.handle(.tick, at: 500).contains(.startApp))
    }

    @Test func anAlertIsShownAndTheSameCollapseIDReplacesIt() {
        var phone = Self.suspendedPhone()
        _ = phone.handle(.pushArrived(Self.alert("A", collapse: "m1")), at: 200)
        let records = Self.records(phone.handle(.pushArrived(Self.alert("B", collapse: "m1")), at: 201))
        #expect(!records.contains { if case .violation = $0 { true } else { false } })
        #expect(phone.notifications.map(\.identifier) == ["m1"])
    }

    @Test func badgeZeroClearsEveryNotification() {
        var phone = Self.suspendedPhone()
        _ = phone.handle(.pushArrived(Self.alert("A", collapse: "m1", badge: 1)), at: 200)
        _ = phone.handle(.pushArrived(Self.alert("B", collapse: "m2", badge: 2)), at: 201)
        let clear = DevicePush(id: "C", type: "alert", priority: 5, collapseID: nil, payload: ["aps": ["badge": 0]])
        let records = Self.records(phone.handle(.pushArrived(clear), at: 202))
        #expect(records.filter { if case .notificationRemoved(_, "clear-all") = $0 { true } else { false } }.count == 2)
        #expect(phone.notifications.isEmpty)
        #expect(phone.badge == 0)
    }

    @Test func theSameMessageShownUnderTwoIdentifiersIsAViolation() {
        var phone = Self.suspendedPhone()
        _ = phone.handle(.pushArrived(Self.alert("A", collapse: "m1")), at: 200)
        let push = DevicePush(
            id: "B", type: "alert", priority: 10, collapseID: "other",
            payload: ["aps": ["alert": "hi"], "beckon": ["reason": "alert", "ids": ["m1"]]])
        let records = Self.records(phone.handle(.pushArrived(push), at: 201))
        #expect(records.contains { if case .violation(.shownTwice, _) = $0 { true } else { false } })
    }

    @Test func theExtensionRewritesTheAlertOrIOSShowsTheOriginalAtItsDeadline() {
        var phone = Self.suspendedPhone(traits: AppTraits(serviceExtension: true))
        let push = Self.alert("A", collapse: "m1", mutable: true)
        #expect(phone.handle(.pushArrived(push), at: 200).contains(.runExtension(push, memoryBytes: 24 << 20)))
        _ = phone.handle(.extensionFinished(push: "A", .content(text: "Anna: hi", outcome: "rewritten")), at: 201)
        #expect(phone.notifications.map(\.text) == ["Anna: hi"])

        let slow = Self.alert("B", collapse: "m2", mutable: true)
        _ = phone.handle(.pushArrived(slow), at: 300)
        let expired = phone.handle(.tick, at: 330)
        #expect(expired.contains(.expireExtension(push: "B")))
        #expect(phone.notifications.last?.text == "BECKON_NEW_MESSAGE")
        // The extension's late answer changes nothing.
        #expect(phone.handle(.extensionFinished(push: "B", .content(text: "late", outcome: "rewritten")), at: 331).isEmpty)
    }

    @Test func onlyAnExtensionWithTheFilteringEntitlementMaySuppress() {
        for filtering in [false, true] {
            var phone = Self.suspendedPhone(traits: AppTraits(serviceExtension: true, filtering: filtering))
            _ = phone.handle(.pushArrived(Self.alert("A", collapse: "m1", mutable: true)), at: 200)
            _ = phone.handle(.extensionFinished(push: "A", .suppressed), at: 201)
            #expect(phone.notifications.isEmpty == filtering)
        }
    }

    @Test func anAlertInFrontAsksTheAppFirst() {
        var phone = SimulatedPhone(traits: AppTraits())
        _ = phone.handle(.user(.launch), at: 0)
        let push = Self.alert("A", collapse: "m1")
        #expect(phone.handle(.pushArrived(push), at: 1).contains(.askWillPresent(push, text: "BECKON_NEW_MESSAGE")))
        _ = phone.handle(.willPresentAnswered(push: "A", show: false), at: 1)
        #expect(phone.notifications.isEmpty)
    }

    @Test func anUnreportedVoIPPushKillsTheAppAndRepeatedOnesBlockVoIP() {
        var phone = SimulatedPhone(traits: AppTraits(voip: true), policy: IOSPolicy(voipFailuresBeforeBlock: 2))
        for (index, id) in ["A", "B"].enumerated() {
            let actions = phone.handle(.pushArrived(Self.voip(id)), at: Double(index * 100))
            #expect(actions.contains(.startApp))
            #expect(actions.contains(.voip(Self.voip(id))))
            let handled = Self.records(phone.handle(.voipHandled(push: id, reported: false), at: Double(index * 100)))
            #expect(handled.contains(.appKilled(why: "voip-not-reported")))
        }
        #expect(phone.voipBlocked)
        #expect(
            Self.records(phone.handle(.pushArrived(Self.voip("C")), at: 300)) == [.pushDiscarded(push: "C", why: "voip-blocked")])
    }

    @Test func aReportedVoIPPushLaunchesEvenAForceQuitApp() {
        var phone = SimulatedPhone(traits: AppTraits(voip: true))
        _ = phone.handle(.user(.launch), at: 0)
        _ = phone.handle(.user(.forceQuit), at: 1)
        #expect(phone.handle(.pushArrived(Self.voip("A")), at: 2).contains(.startApp))
        #expect(phone.handle(.voipHandled(push: "A", reported: true), at: 2).isEmpty)
        #expect(phone.app == .background)
    }

    @Test func tappingANotificationOfAnAppNotRunningLaunchesItWithTheNotification() {
        var phone = Self.suspendedPhone()
        _ = phone.handle(.pushArrived(Self.alert("A", collapse: "m1")), at: 200)
        _ = phone.handle(.user(.forceQuit), at: 201)
        let actions = phone.handle(.user(.tap("m1")), at: 202)
        let payload = Self.alert("A", collapse: "m1").payload
        #expect(
            actions.filter { if case .record = $0 { false } else { true } } == [
                .startApp, .lifecycle(.didFinishLaunching(remoteNotification: payload)),
                .tap(identifier: "m1", payload: payload, shownAt: 200), .lifecycle(.didBecomeActive),
            ])
        #expect(phone.notifications.isEmpty)
        #expect(phone.app == .foreground)
    }

    @Test func aPushWhileTheAppSwitcherIsOpenArrivesInactive() {
        var phone = SimulatedPhone(traits: AppTraits())
        _ = phone.handle(.user(.launch), at: 0)
        _ = phone.handle(.user(.openSwitcher), at: 1)
        #expect(
            phone.handle(.pushArrived(Self.background("A")), at: 2).contains(
                .remoteNotification(Self.background("A"), state: .inactive, token: 1)))
    }

    @Test func aBackgroundPushAtPriorityTenIsCounted() {
        var phone = Self.suspendedPhone()
        let records = Self.records(phone.handle(.pushArrived(Self.background("A", priority: 10)), at: 200))
        #expect(records.contains { if case .violation(.backgroundAtPriority10, _) = $0 { true } else { false } })
    }

    @Test func theHeldPushIsLostWhenIOSKillsTheApp() {
        var phone = Self.suspendedPhone(
            policy: IOSPolicy(backgroundLaunchesPerHour: 0, backgroundBurst: 1, suspendedLifetimeSeconds: 1000))
        _ = phone.handle(.pushArrived(Self.background("A")), at: 200)
        _ = phone.handle(.completionCalled(token: 1, result: "noData"), at: 201)
        _ = phone.handle(.tick, at: 300)
        _ = phone.handle(.pushArrived(Self.background("B")), at: 400)
        #expect(phone.heldBackground?.id == "B")
        // iOS reclaims the suspended app (suspended at 300), and the held push goes with it.
        let records = Self.records(phone.handle(.tick, at: 1300))
        #expect(records.contains(.pushDiscarded(push: "B", why: "reclaimed")))
        #expect(phone.heldBackground == nil)
    }

    @Test func tasksStillOpenWhenTheTimeIsUpAreExpiredFirst() {
        var phone = SimulatedPhone(traits: AppTraits())
        _ = phone.handle(.user(.launch), at: 0)
        _ = phone.handle(.backgroundTaskBegan(7), at: 1)
        _ = phone.handle(.user(.home), at: 2)
        let actions = phone.handle(.tick, at: 32)
        #expect(actions.firstIndex(of: .expireBackgroundTasks([7]))! < actions.firstIndex(of: .suspendApp)!)
    }

    @Test func iOSReclaimsAnAppSuspendedTooLong() {
        var phone = Self.suspendedPhone(policy: IOSPolicy(suspendedLifetimeSeconds: 120))
        #expect(phone.app == .suspended)
        #expect(phone.nextDeadline == 220, "suspended at 100")
        #expect(Self.records(phone.handle(.tick, at: 220)).contains(.appKilled(why: "reclaimed")))
        #expect(phone.app == .notRunning)
        // A background push launches it again.
        #expect(phone.handle(.pushArrived(Self.background("A")), at: 300).contains(.startApp))
    }

    @Test func theBudgetsDeclinesRepeatUnderTheSameSeed() {
        func run(seed: UInt64) -> [Bool] {
            var budget = BackgroundBudget(perHour: 100, burst: 100, dropRate: 0.5, seed: seed)
            return (0..<32).map { _ in budget.declines() }
        }
        #expect(run(seed: 7) == run(seed: 7))
        #expect(run(seed: 7) != run(seed: 8))
        #expect(run(seed: 7).contains(true) && run(seed: 7).contains(false))
    }
}
