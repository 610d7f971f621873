// iOS only: built where UIKit exists. A translation, no decisions (docs/client-sdk.md).
#if canImport(UIKit) && canImport(UserNotifications)
import BeckonClient
import BeckonJSON
import Foundation
import UIKit
import UserNotifications

/// What the app delegate and the notification centre's delegate forward, one line per callback
/// (seed 001's entry points). Every call turns into an `AppEvent`, in the order UIKit made them.
/// The app's state comes from UIKit's notifications (`UIApplicationLifecycle`), which UIKit
/// posts with or without scenes, so nothing here depends on the app delegate's lifecycle
/// methods, which a scene-based app — every SwiftUI app — never receives (apns.md E.9).
@MainActor
public final class BeckonAppDelegateBridge {
    /// The app every callback is forwarded to.
    public let app: BeckonApp

    /// Create it in `application(_:didFinishLaunchingWithOptions:)`.
    public init(app: BeckonApp) {
        self.app = app
        app.observeLifecycle(UIApplicationLifecycle())
    }

    /// `application(_:didFinishLaunchingWithOptions:)`: a push that launched the app is handled.
    public func didFinishLaunching(options: [UIApplication.LaunchOptionsKey: Any]?) {
        let remote = options?[.remoteNotification] as? [AnyHashable: Any]
        app.handle(.didFinishLaunching(remoteNotification: remote.flatMap(JSONValue.init(userInfo:))))
    }

    /// `application(_:didReceiveRemoteNotification:fetchCompletionHandler:)`.
    public func didReceiveRemoteNotification(
        _ userInfo: [AnyHashable: Any], application: UIApplication,
        fetchCompletionHandler completionHandler: @escaping (UIBackgroundFetchResult) -> Void
    ) {
        let state: ApplicationState =
            switch application.applicationState {
            case .active: .active
            case .inactive: .inactive
            default: .background
            }
        let handler = MainThreadCompletion(completionHandler)
        app.handle(.didReceiveRemoteNotification(
            JSONValue(userInfo: userInfo) ?? [:], state: state,
            completion: BackgroundCompletion { result in handler.call(result) }))
    }

    /// `userNotificationCenter(_:didReceive:)`: returns once the SDK has handled it (a tap
    /// routed, "mark read" stored), so iOS's completion comes after (apns.md E.5).
    public func didReceive(_ response: UNNotificationResponse) async {
        let request = response.notification.request
        let action: NotificationResponse.Action =
            switch response.actionIdentifier {
            case UNNotificationDefaultActionIdentifier: .open
            case UNNotificationDismissActionIdentifier: .dismiss
            default: .custom(response.actionIdentifier, text: (response as? UNTextInputNotificationResponse)?.userText)
            }
        await app.respond(to: NotificationResponse(
            identifier: request.identifier, userInfo: JSONValue(userInfo: request.content.userInfo) ?? [:], action: action,
            date: response.notification.date))
    }

    /// `userNotificationCenter(_:willPresent:)`: nil for a notification that is not Beckon's,
    /// which the app presents as it chooses.
    public func willPresent(_ notification: UNNotification) async -> UNNotificationPresentationOptions? {
        let request = notification.request
        switch await app.willPresent(identifier: request.identifier, userInfo: JSONValue(userInfo: request.content.userInfo) ?? [:]) {
        case .show: return [.banner, .list, .sound, .badge]
        case .hide: return []
        case .notBeckon: return nil
        }
    }

    /// The UI can open a conversation; `open` runs on the main actor.
    public func ready(open: @escaping @MainActor @Sendable (NotificationTap) -> Void) {
        app.handle(.ready(open: open))
    }
}

/// UIKit's completion handler, called on the main thread, once (`BackgroundCompletion` sees to
/// the once).
private final class MainThreadCompletion: @unchecked Sendable {
    private let handler: (UIBackgroundFetchResult) -> Void

    init(_ handler: @escaping (UIBackgroundFetchResult) -> Void) { self.handler = handler }

    func call(_ result: BackgroundFetchResult) {
        let uiResult: UIBackgroundFetchResult =
            switch result {
            case .newData: .newData
            case .noData: .noData
            case .failed: .failed
            }
        DispatchQueue.main.async { self.handler(uiResult) }
    }
}
#endif
