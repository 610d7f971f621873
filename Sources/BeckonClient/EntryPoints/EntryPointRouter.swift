/// Routes the app's entry points to what each must do, once (seed 001; docs/design.md, "The
/// client SDK's duties"). Pure: events in, actions out; `BeckonApp` carries them out.
///
/// The same delegate method reports a push that arrived and a tap on one, and the application
/// state only partly tells them apart: `inactive` means a tap only while the app is really
/// coming to the front, which `appIsStarting` tracks (set at `willEnterForeground` and at a
/// launch with a notification, cleared by every other transition).
package struct EntryPointRouter: Hashable, Sendable {
    package enum Event: Hashable, Sendable {
        case didFinishLaunching(withNotification: Bool)
        case willEnterForeground
        case didBecomeActive
        case willResignActive
        case didEnterBackground
        /// `application(_:didReceiveRemoteNotification:fetchCompletionHandler:)`.
        case remoteNotification(RemoteNotification, state: ApplicationState)
        /// `userNotificationCenter(_:didReceive:)`: the user opened a notification.
        case notificationTapped(NotificationTap)
        /// The app's UI can open a conversation now.
        case appReady
        /// The network is usable again.
        case networkAvailable
    }

    package enum Action: Hashable, Sendable {
        /// Hold a session for as long as the app is in front.
        case startForegroundSync
        case stopForegroundSync
        /// Sync within the background budget, then call the completion handler with the result.
        case backgroundSync
        /// Act on what the push says at once: remove `clear` ids, set the badge.
        case applyPush(RemoteNotification)
        /// The badge-0 push: every notification is gone.
        case clearAllNotifications
        /// Call the completion handler now.
        case complete(BackgroundFetchResult)
        /// Open what the user tapped.
        case open(NotificationTap)
        /// Bring the ledger in line with what is on screen.
        case reconcileNotifications
        /// The foreground session, if waiting to reconnect, reconnects now.
        case reconnectNow
    }

    package private(set) var appIsStarting = false
    package private(set) var isActive = false
    package private(set) var isReady = false
    /// A tap that came before the UI was ready; opened once it is.
    package private(set) var pendingTap: NotificationTap?
    /// Taps opened since the app came to the front: one tap reported by two delegate methods
    /// opens once.
    private var opened: Set<String> = []

    package init() {}

    package mutating func handle(_ event: Event) -> [Action] {
        switch event {
        case .didFinishLaunching(let withNotification):
            // Seed 001: a launch with a notification means an inactive app that follows is
            // starting, so `inactive` then is a tap.
            appIsStarting = withNotification
            return []

        case .willEnterForeground:
            appIsStarting = true
            return [.reconcileNotifications]

        case .didBecomeActive:
            appIsStarting = false
            isActive = true
            return [.startForegroundSync, .reconcileNotifications]

        case .willResignActive:
            appIsStarting = false
            isActive = false
            return []

        case .didEnterBackground:
            appIsStarting = false
            isActive = false
            opened.removeAll()
            return [.stopForegroundSync]

        case .remoteNotification(let notification, let state):
            if notification.isClearAll { return [.clearAllNotifications, .complete(.noData)] }
            let apply: [Action] = notification.beckon == nil ? [] : [.applyPush(notification)]
            switch state {
            case .background:
                return apply + [.backgroundSync]
            case .inactive where !appIsStarting:
                // Inactive but not starting (seed 001's edge case: the app switcher): an
                // arrival, not a tap.
                return apply + [.backgroundSync]
            case .inactive:
                return apply + tap(notification.tap) + [.complete(.noData)]
            case .active:
                // The foreground session carries the message itself; if it is between
                // attempts (the network was gone), the push says the server is back.
                return apply + [.reconnectNow, .complete(.noData)]
            }

        case .notificationTapped(let notificationTap):
            return tap(notificationTap)

        case .networkAvailable:
            return isActive ? [.reconnectNow] : []

        case .appReady:
            isReady = true
            guard let pendingTap else { return [] }
            self.pendingTap = nil
            return [.open(pendingTap)]
        }
    }

    private mutating func tap(_ tap: NotificationTap) -> [Action] {
        guard opened.insert(tap.key).inserted else { return [] }
        guard isReady else {
            pendingTap = tap
            return []
        }
        return [.open(tap)]
    }
}
