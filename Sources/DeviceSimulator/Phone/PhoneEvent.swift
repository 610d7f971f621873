/// What happens to a phone: the user, APNs, the app's own calls into iOS, and time.
public enum PhoneEvent: Hashable, Sendable {
    case user(UserAction)
    /// APNs delivered a push to the phone.
    case pushArrived(DevicePush)
    /// The app called the background fetch completion handler `token` was given with.
    case completionCalled(token: Int, result: String)
    /// The app's PushKit handler returned; `reported` says whether it reported a call to CallKit
    /// before it did (apns.md E.6).
    case voipHandled(push: String, reported: Bool)
    /// The notification service extension handed its content over (or died).
    case extensionFinished(push: String, ExtensionResult)
    /// The app answered `willPresent` for an alert that arrived while it was in front.
    case willPresentAnswered(push: String, show: Bool)
    /// The app posted a local notification.
    case appAddedNotification(identifier: String, text: String)
    /// The notification service extension posted a local notification (its process runs while
    /// it does, whatever the app's state).
    case extensionAddedNotification(identifier: String, text: String)
    /// The app removed delivered notifications.
    case appRemovedNotifications([String])
    case appSetBadge(Int)
    /// `beginBackgroundTask` / `endBackgroundTask`.
    case backgroundTaskBegan(Int)
    case backgroundTaskEnded(Int)
    /// At the moment iOS suspended the app, a transaction of its held an SQLite lock on the
    /// shared store (0xdead10cc, apns.md E.9).
    case lockHeldWhenSuspended
    /// These background tasks were still open when their expiration handlers returned.
    case backgroundTasksLeftOpen([Int])
    /// Time passed: deadlines that have come are acted on.
    case tick
}

/// What a person does with the phone.
public enum UserAction: Hashable, Sendable {
    /// Opens the app from the home screen (or the app switcher).
    case launch
    /// Goes to the home screen, or locks the phone.
    case home
    /// Opens the app switcher while the app is in front: it stays inactive.
    case openSwitcher
    case closeSwitcher
    /// Swipes the app away in the app switcher (apns.md E.3, "User force-quit").
    case forceQuit
    case reboot
    /// Unlocks the phone (the first unlock after a restart makes protected data readable, apns.md
    /// E.9). Opening an app unlocks it too.
    case unlock
    case goOffline
    case goOnline
    /// Taps a notification (by identifier).
    case tap(String)
    /// Swipes a notification away.
    case swipeAway(String)

    /// The name the timeline and scenario files use.
    public var name: String {
        switch self {
        case .launch: "launch"
        case .home: "home"
        case .openSwitcher: "open-switcher"
        case .closeSwitcher: "close-switcher"
        case .forceQuit: "force-quit"
        case .reboot: "reboot"
        case .unlock: "unlock"
        case .goOffline: "go-offline"
        case .goOnline: "go-online"
        case .tap(let identifier): "tap \(identifier)"
        case .swipeAway(let identifier): "swipe-away \(identifier)"
        }
    }
}

/// How the extension's run ended.
public enum ExtensionResult: Hashable, Sendable {
    /// It handed over content to show; `messages` are those its `beckon.ids` name when it
    /// rewrote them (a notification standing for several, rule 11), nil for the push's own.
    case content(text: String, outcome: String, messages: [String]? = nil)
    /// It handed over empty content: suppress, if the app may (apns.md E.4).
    case suppressed
    /// It could not start or crashed: iOS shows the push's own content.
    case crashed
    /// What it parsed took it over its memory limit: iOS killed it and shows the push's own
    /// content (apns.md E.4).
    case overMemory
}
