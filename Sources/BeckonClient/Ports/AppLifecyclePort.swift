/// UIKit's application-state notifications (`UIApplication.didBecomeActiveNotification` and its
/// siblings). UIKit posts them whether or not the app uses scenes, whereas it does not call the
/// app delegate's lifecycle methods in an app with scenes — every SwiftUI app (apns.md E.9).
/// So the SDK follows the app's state through these, and the app forwards no lifecycle method.
/// The iOS adapter is `UIApplicationLifecycle`.
public protocol AppLifecyclePort: Sendable {
    /// Calls `handler` for every notification from now on, synchronously, on the thread that
    /// posted it (UIKit posts them on the main thread, in order).
    func observe(_ handler: @escaping @Sendable (AppLifecycleEvent) -> Void)
}
