import BeckonJSON

/// What the app's delegates and UIKit's notifications report to `BeckonApp`, one case per
/// callback (the iOS adapters `BeckonAppDelegateBridge` and `UIApplicationLifecycle` forward
/// them; an app without them calls `BeckonApp.handle` itself).
public enum AppEvent: Sendable {
    /// `application(_:didFinishLaunchingWithOptions:)`, with the launch options' remote
    /// notification if there is one.
    case didFinishLaunching(remoteNotification: JSONValue?)
    case willEnterForeground
    case didBecomeActive
    case willResignActive
    case didEnterBackground
    /// `application(_:didReceiveRemoteNotification:fetchCompletionHandler:)`.
    case didReceiveRemoteNotification(JSONValue, state: ApplicationState, completion: BackgroundCompletion)
    /// `userNotificationCenter(_:didReceive:withCompletionHandler:)`: opened, dismissed, or one
    /// of the app's actions.
    case notificationResponse(NotificationResponse)
    /// The network is usable again (`NWPathMonitor` reports `.satisfied`): a session waiting
    /// out its backoff reconnects now.
    case networkAvailable
    /// The device was unlocked: protected data is readable again (apns.md E.9).
    case protectedDataDidBecomeAvailable
    /// The UI is up: taps are opened with `open`, on the main actor, from now on; a kept one at once.
    case ready(open: @MainActor @Sendable (NotificationTap) -> Void)
}
