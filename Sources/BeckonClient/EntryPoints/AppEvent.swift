import BeckonJSON

/// What the app's delegates report to `BeckonApp`, one case per UIKit callback (the iOS adapter
/// `BeckonAppDelegateBridge` forwards them; an app without it calls `BeckonApp.handle` itself).
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
    /// `userNotificationCenter(_:didReceive:withCompletionHandler:)` for the default action.
    case didTapNotification(identifier: String, userInfo: JSONValue)
    /// The network is usable again (`NWPathMonitor` reports `.satisfied`): a session waiting
    /// out its backoff reconnects now.
    case networkAvailable
    /// The UI is up: taps are opened with `open` from now on, a kept one at once.
    case ready(open: @Sendable (NotificationTap) -> Void)
}
