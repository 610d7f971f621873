/// One of UIKit's application-state notifications (`AppLifecyclePort`).
public enum AppLifecycleEvent: String, Hashable, Sendable, CaseIterable {
    case willEnterForeground
    case didBecomeActive
    case willResignActive
    case didEnterBackground
    /// `protectedDataDidBecomeAvailableNotification`: the device was unlocked, so protected
    /// files and keychain items can be read again (apns.md E.9).
    case protectedDataDidBecomeAvailable

    var appEvent: AppEvent {
        switch self {
        case .willEnterForeground: .willEnterForeground
        case .didBecomeActive: .didBecomeActive
        case .willResignActive: .willResignActive
        case .didEnterBackground: .didEnterBackground
        case .protectedDataDidBecomeAvailable: .protectedDataDidBecomeAvailable
        }
    }
}
