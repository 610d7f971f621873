// iOS only: built where UIKit exists. A translation, no decisions (docs/client-sdk.md).
#if canImport(UIKit) && canImport(UserNotifications)
import BeckonClient
import BeckonJSON
import Foundation
import UIKit
import UserNotifications

/// What the app delegate and the notification centre's delegate forward, one line per callback
/// (seed 001's entry points). Every call turns into an `AppEvent`, in the order UIKit made them.
@MainActor
public final class BeckonAppDelegateBridge {
    public let app: BeckonApp

    public init(app: BeckonApp) {
        self.app = app
    }

    public func didFinishLaunching(options: [UIApplication.LaunchOptionsKey: Any]?) {
        let remote = options?[.remoteNotification] as? [AnyHashable: Any]
        app.handle(.didFinishLaunching(remoteNotification: remote.flatMap(JSONValue.init(userInfo:))))
    }

    public func willEnterForeground() { app.handle(.willEnterForeground) }
    public func didBecomeActive() { app.handle(.didBecomeActive) }
    public func willResignActive() { app.handle(.willResignActive) }
    public func didEnterBackground() { app.handle(.didEnterBackground) }

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

    /// `userNotificationCenter(_:didReceive:withCompletionHandler:)`.
    public func didReceive(_ response: UNNotificationResponse) {
        guard response.actionIdentifier == UNNotificationDefaultActionIdentifier else { return }
        let request = response.notification.request
        app.handle(.didTapNotification(
            identifier: request.identifier, userInfo: JSONValue(userInfo: request.content.userInfo) ?? [:]))
    }

    /// `userNotificationCenter(_:willPresent:withCompletionHandler:)`.
    public func willPresent(_ notification: UNNotification) async -> UNNotificationPresentationOptions {
        let request = notification.request
        let show = await app.willPresent(
            identifier: request.identifier, userInfo: JSONValue(userInfo: request.content.userInfo) ?? [:])
        return show ? [.banner, .list, .sound, .badge] : []
    }

    /// The UI can open a conversation.
    public func ready(open: @escaping @Sendable (NotificationTap) -> Void) {
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

/// `BackgroundTimePort` over `UIApplication.beginBackgroundTask`.
public struct UIKitBackgroundTime: BackgroundTimePort {
    public init() {}

    public func begin(_ name: String, expired: @escaping @Sendable () -> Void) -> BackgroundTaskToken {
        Self.onMain {
            BackgroundTaskToken(UIApplication.shared.beginBackgroundTask(withName: name, expirationHandler: expired).rawValue)
        }
    }

    public func end(_ token: BackgroundTaskToken) {
        Self.onMain { UIApplication.shared.endBackgroundTask(UIBackgroundTaskIdentifier(rawValue: token.rawValue)) }
    }

    private static func onMain<Result: Sendable>(_ body: @MainActor () -> Result) -> Result {
        if Thread.isMainThread { return MainActor.assumeIsolated(body) }
        return DispatchQueue.main.sync { MainActor.assumeIsolated(body) }
    }
}
#endif
