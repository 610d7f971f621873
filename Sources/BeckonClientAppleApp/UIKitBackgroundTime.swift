// iOS apps only (UIApplication.shared is unavailable in app extensions): built where UIKit
// exists. A translation, no decisions (docs/client-sdk.md).
#if canImport(UIKit)
import BeckonClient
import UIKit

/// `BackgroundTimePort` over `UIApplication.beginBackgroundTask`. Both calls are `nonisolated`
/// and safe off the main thread (apns.md E.9), so nothing waits for the main thread; the SDK
/// ends the task inside `expired` when the time runs out (`BackgroundActivity`).
public struct UIKitBackgroundTime: BackgroundTimePort {
    private let application: UIApplication

    @MainActor
    public init() {
        self.application = UIApplication.shared
    }

    public func begin(_ name: String, expired: @escaping @Sendable () -> Void) -> BackgroundTaskToken {
        BackgroundTaskToken(application.beginBackgroundTask(withName: name, expirationHandler: expired).rawValue)
    }

    public func end(_ token: BackgroundTaskToken) {
        application.endBackgroundTask(UIBackgroundTaskIdentifier(rawValue: token.rawValue))
    }
}
#endif
