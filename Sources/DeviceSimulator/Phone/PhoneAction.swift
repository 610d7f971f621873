import BeckonClient
import BeckonJSON

/// What the phone does in answer: callbacks into the app and its extension, records for the
/// timeline. The runtime (`SimulatedDevice`) carries them out in order.
public enum PhoneAction: Hashable, Sendable {
    case record(TimelineEvent.What)
    /// Start the app's process (a fresh `BeckonApp` over the same store).
    case startApp
    /// End it: its sockets drop, nothing it does afterwards reaches anything.
    case endApp
    /// Freeze it: its sockets drop (docs/simulator.md, "Suspension").
    case suspendApp
    case resumeApp
    case lifecycle(Lifecycle)
    /// `didReceiveRemoteNotification` with a completion handler that reports back with `token`.
    case remoteNotification(DevicePush, state: ApplicationState, token: Int)
    /// PushKit's handler.
    case voip(DevicePush)
    /// The notification service extension's `didReceive`, with this much memory.
    case runExtension(DevicePush, memoryBytes: Int)
    /// `serviceExtensionTimeWillExpire`.
    case expireExtension(push: String)
    /// The extension's process ends (the phone restarts).
    case endExtension
    /// `beginBackgroundTask`'s expiration handlers, for tasks still open when the time is up.
    case expireBackgroundTasks([Int])
    /// `userNotificationCenter(_:willPresent:)`.
    case askWillPresent(DevicePush, text: String)
    /// `userNotificationCenter(_:didReceive:)`: the user opened this notification, shown at
    /// `shownAt` (virtual seconds: its `UNNotification.date`).
    case tap(identifier: String, payload: JSONValue, shownAt: Double)
    /// The phone's network: APNs and the app's sockets follow it.
    case setOnline(Bool)
    /// Protected data (files of the default class, "after first unlock" keychain items) becomes
    /// readable, at the first unlock after a restart, or unreadable, at the restart (apns.md E.9).
    case setProtectedData(available: Bool)

    /// `didFinishLaunching` is the app delegate's; the others are UIKit's application-state
    /// notifications, which UIKit posts with or without scenes, whereas it calls the matching
    /// app-delegate methods only in an app without scenes (apns.md E.9). The simulated app is
    /// scene-based, as every SwiftUI app is: it gets the notifications only.
    public enum Lifecycle: Hashable, Sendable {
        case didFinishLaunching(remoteNotification: JSONValue?)
        case willEnterForeground
        case didBecomeActive
        case willResignActive
        case didEnterBackground
    }
}
