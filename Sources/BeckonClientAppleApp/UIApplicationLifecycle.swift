// iOS apps only: built where UIKit exists. A translation, no decisions (docs/client-sdk.md).
#if canImport(UIKit)
import BeckonClient
import Foundation
import UIKit

/// `AppLifecyclePort` over UIKit's application-state notifications, which UIKit posts with or
/// without scenes (apns.md E.9). Observers run on the posting thread (the main thread), in order.
public final class UIApplicationLifecycle: AppLifecyclePort, @unchecked Sendable {
    private static let names: [(NSNotification.Name, AppLifecycleEvent)] = [
        (UIApplication.willEnterForegroundNotification, .willEnterForeground),
        (UIApplication.didBecomeActiveNotification, .didBecomeActive),
        (UIApplication.willResignActiveNotification, .willResignActive),
        (UIApplication.didEnterBackgroundNotification, .didEnterBackground),
        (UIApplication.protectedDataDidBecomeAvailableNotification, .protectedDataDidBecomeAvailable),
    ]
    private let lock = NSLock()
    private var observers: [any NSObjectProtocol] = []

    public init() {}

    public func observe(_ handler: @escaping @Sendable (AppLifecycleEvent) -> Void) {
        let added = Self.names.map { name, event in
            NotificationCenter.default.addObserver(forName: name, object: nil, queue: nil) { _ in handler(event) }
        }
        lock.withLock { observers += added }
    }

    deinit {
        for observer in observers { NotificationCenter.default.removeObserver(observer) }
    }
}
#endif
