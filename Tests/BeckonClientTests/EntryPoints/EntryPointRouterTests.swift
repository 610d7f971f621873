import BeckonClient
import BeckonClientTestSupport
import BeckonJSON
import Testing

/// Seed 001's cases, each doing the right thing once.
@Suite struct EntryPointRouterTests {
    static let push = RemoteNotification(payload: [
        "aps": ["alert": ["loc-key": "BECKON_NEW_MESSAGE"], "thread-id": "t1"],
        "beckon": ["reason": "alert", "ids": ["m1"]],
    ])
    static let wake = RemoteNotification(payload: [
        "aps": ["content-available": 1], "beckon": ["reason": "wake", "ids": ["m1"], "clear": ["m0"], "badge": 2],
    ])

    func ready() -> EntryPointRouter {
        var router = EntryPointRouter()
        _ = router.handle(.appReady)
        return router
    }

    @Test func aLaunchWithoutANotificationThenABackgroundPushSyncs() {
        var router = EntryPointRouter()
        #expect(router.handle(.didFinishLaunching(withNotification: false)) == [])
        #expect(router.handle(.remoteNotification(Self.wake, state: .background)) == [.applyPush(Self.wake), .backgroundSync])
    }

    @Test func aLaunchWithANotificationMakesTheFollowingInactiveCallATap() {
        var router = ready()
        _ = router.handle(.didFinishLaunching(withNotification: true))
        #expect(router.appIsStarting)
        let actions = router.handle(.remoteNotification(Self.push, state: .inactive))
        #expect(actions == [.applyPush(Self.push), .open(Self.push.tap), .complete(.noData)])
        #expect(Self.push.tap.threadID == "t1" && Self.push.tap.messageID == "m1")
    }

    @Test func aTapOnARunningAppComesThroughWillEnterForeground() {
        var router = ready()
        _ = router.handle(.didEnterBackground)
        _ = router.handle(.willEnterForeground)
        #expect(router.handle(.remoteNotification(Self.push, state: .inactive)).contains(.open(Self.push.tap)))
    }

    @Test func inactiveButNotStartingIsAnArrivalNotATap() {
        // Seed 001's edge case: the app switcher leaves the app inactive, and a push arrives.
        var router = ready()
        _ = router.handle(.didBecomeActive)
        _ = router.handle(.willResignActive)
        #expect(!router.appIsStarting)
        #expect(router.handle(.remoteNotification(Self.wake, state: .inactive)) == [.applyPush(Self.wake), .backgroundSync])
    }

    @Test func inFrontThePushIsAppliedAndCompletedTheSessionCarriesTheMessage() {
        var router = ready()
        #expect(router.handle(.didBecomeActive) == [.startForegroundSync, .reconcileNotifications])
        #expect(router.handle(.remoteNotification(Self.wake, state: .active)) == [.applyPush(Self.wake), .reconnectNow, .complete(.noData)])
    }

    @Test func theNetworkComingBackReconnectsOnlyInFront() {
        var router = ready()
        #expect(router.handle(.networkAvailable) == [], "in the background the next push or launch connects")
        _ = router.handle(.didBecomeActive)
        #expect(router.handle(.networkAvailable) == [.reconnectNow])
    }

    @Test func theClearAllPushClearsEverything() {
        var router = EntryPointRouter()
        let clearAll = RemoteNotification(payload: ["aps": ["badge": 0]])
        #expect(clearAll.isClearAll)
        #expect(router.handle(.remoteNotification(clearAll, state: .background)) == [.clearAllNotifications, .complete(.noData)])
        #expect(!RemoteNotification(payload: ["aps": ["badge": 0, "alert": "x"]]).isClearAll)
        #expect(RemoteNotification(payload: ["aps": ["badge": 0], "beckon": ["reason": "clear-all"]]).isClearAll)
    }

    @Test func aTapBeforeTheAppIsReadyIsKeptAndOpenedOnce() {
        var router = EntryPointRouter()
        let tap = NotificationTap(identifier: "m1", payload: Self.push.payload)
        #expect(router.handle(.notificationTapped(tap)) == [])
        #expect(router.pendingTap == tap)
        #expect(router.handle(.appReady) == [.open(tap)])
        #expect(router.handle(.appReady) == [])
    }

    @Test func oneTapReportedTwiceOpensOnce() {
        var router = ready()
        _ = router.handle(.didFinishLaunching(withNotification: true))
        #expect(router.handle(.remoteNotification(Self.push, state: .inactive)).contains(.open(Self.push.tap)))
        #expect(router.handle(.notificationTapped(NotificationTap(identifier: "m1", payload: Self.push.payload))) == [])
        // Another time in front, the same notification may be opened again.
        _ = router.handle(.didEnterBackground)
        #expect(router.handle(.notificationTapped(NotificationTap(identifier: "m1", payload: Self.push.payload))) != [])
    }

    @Test func leavingTheForegroundStopsTheSession() {
        var router = ready()
        _ = router.handle(.didBecomeActive)
        #expect(router.handle(.didEnterBackground) == [.stopForegroundSync])
        #expect(!router.isActive)
    }
}
