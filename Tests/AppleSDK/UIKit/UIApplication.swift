// Stand-in for the part of Apple's SDK that the client SDK's adapters use (scripts/typecheck-apple.sh;
// docs/client-sdk.md, "What the type-check proves"). Declarations only: it is type-checked against,
// never linked or run. Kept to Apple's documented declarations (names, argument labels,
// optionality, isolation, Sendable, availability); where Linux cannot express one, the comment
// beside it says how it differs.
//
// UIKit: UIApplication.
//   https://developer.apple.com/documentation/uikit/uiapplication
//   https://developer.apple.com/documentation/uikit/uiapplication/shared
//   https://developer.apple.com/documentation/uikit/uiapplication/applicationstate
//   https://developer.apple.com/documentation/uikit/uiapplication/isprotecteddataavailable
//   https://developer.apple.com/documentation/uikit/uiapplication/beginbackgroundtask(expirationhandler:)
//   https://developer.apple.com/documentation/uikit/uiapplication/beginbackgroundtask(withname:expirationhandler:)
//   https://developer.apple.com/documentation/uikit/uiapplication/endbackgroundtask(_:)
//   https://developer.apple.com/documentation/uikit/uiapplication/registerforremotenotifications()
//   https://developer.apple.com/documentation/uikit/uiapplication/didbecomeactivenotification (and siblings)
//   https://developer.apple.com/documentation/uikit/uibackgroundtaskidentifier
//   https://developer.apple.com/documentation/uikit/uibackgroundfetchresult
//
// Extension-unavailable API (Objective-C `NS_EXTENSION_UNAVAILABLE_IOS`) carries
// `@available(iOSApplicationExtension, unavailable)` as in Apple's SDK. The Linux compiler does not
// evaluate iOS availability, so when this module is built with `-D APPLICATION_EXTENSION` (the
// extension flavour of the check) the same declarations are also `@available(*, unavailable)`.

@_exported import Foundation

/// `@MainActor class UIApplication : UIResponder`
@MainActor
open class UIApplication: UIResponder {
    /// `class var shared: UIApplication { get }` — `NS_EXTENSION_UNAVAILABLE_IOS("Use view controller
    /// based solutions where appropriate instead.")`
    #if APPLICATION_EXTENSION
    @available(*, unavailable, message: "unavailable in application extensions for iOS: Use view controller based solutions where appropriate instead.")
    #endif
    @available(iOSApplicationExtension, unavailable, message: "Use view controller based solutions where appropriate instead.")
    open class var shared: UIApplication { fatalError("stand-in") }

    /// `unowned(unsafe) var delegate: (any UIApplicationDelegate)? { get set }`
    open var delegate: (any UIApplicationDelegate)? {
        get { fatalError("stand-in") }
        set { fatalError("stand-in") }
    }

    /// `var applicationState: UIApplication.State { get }`
    @available(iOS 4.0, *)
    open var applicationState: UIApplication.State { fatalError("stand-in") }

    /// `nonisolated var isProtectedDataAvailable: Bool { get }`
    @available(iOS 4.0, *)
    nonisolated open var isProtectedDataAvailable: Bool { fatalError("stand-in") }

    /// `var backgroundTimeRemaining: TimeInterval { get }`
    @available(iOS 4.0, *)
    open var backgroundTimeRemaining: TimeInterval { fatalError("stand-in") }

    /// `nonisolated func beginBackgroundTask(expirationHandler handler: (@MainActor @Sendable () -> Void)? = nil)
    /// -> UIBackgroundTaskIdentifier`
    @available(iOS 4.0, *)
    nonisolated open func beginBackgroundTask(
        expirationHandler handler: (@MainActor @Sendable () -> Void)? = nil
    ) -> UIBackgroundTaskIdentifier {
        fatalError("stand-in")
    }

    /// `nonisolated func beginBackgroundTask(withName taskName: String?,
    /// expirationHandler handler: (@MainActor @Sendable () -> Void)? = nil) -> UIBackgroundTaskIdentifier`
    @available(iOS 7.0, *)
    nonisolated open func beginBackgroundTask(
        withName taskName: String?, expirationHandler handler: (@MainActor @Sendable () -> Void)? = nil
    ) -> UIBackgroundTaskIdentifier {
        fatalError("stand-in")
    }

    /// `nonisolated func endBackgroundTask(_ identifier: UIBackgroundTaskIdentifier)`
    @available(iOS 4.0, *)
    nonisolated open func endBackgroundTask(_ identifier: UIBackgroundTaskIdentifier) {
        fatalError("stand-in")
    }

    /// `func registerForRemoteNotifications()`
    @available(iOS 8.0, *)
    open func registerForRemoteNotifications() { fatalError("stand-in") }

    /// `func unregisterForRemoteNotifications()`
    @available(iOS 3.0, *)
    open func unregisterForRemoteNotifications() { fatalError("stand-in") }

    /// `var isRegisteredForRemoteNotifications: Bool { get }`
    @available(iOS 8.0, *)
    open var isRegisteredForRemoteNotifications: Bool { fatalError("stand-in") }

    /// `var connectedScenes: Set<UIScene> { get }`
    @available(iOS 13.0, *)
    open var connectedScenes: Set<UIScene> { fatalError("stand-in") }

    /// `var applicationIconBadgeNumber: Int { get set }` (deprecated in iOS 17: `UNUserNotificationCenter.setBadgeCount`)
    @available(iOS, introduced: 2.0, deprecated: 17.0, message: "Use -[UNUserNotificationCenter setBadgeCount:withCompletionHandler:] instead.")
    open var applicationIconBadgeNumber: Int {
        get { fatalError("stand-in") }
        set { fatalError("stand-in") }
    }

    /// `enum State : Int, @unchecked Sendable`
    public enum State: Int, @unchecked Sendable {
        case active = 0
        case inactive = 1
        case background = 2
    }

    /// `struct LaunchOptionsKey : Hashable, Equatable, RawRepresentable, @unchecked Sendable`
    public struct LaunchOptionsKey: Hashable, RawRepresentable, @unchecked Sendable {
        public let rawValue: String
        public init(rawValue: String) { self.rawValue = rawValue }
        /// `static let remoteNotification: UIApplication.LaunchOptionsKey`
        public static let remoteNotification = LaunchOptionsKey(rawValue: "UIApplicationLaunchOptionsRemoteNotificationKey")
        /// `static let url: UIApplication.LaunchOptionsKey`
        public static let url = LaunchOptionsKey(rawValue: "UIApplicationLaunchOptionsURLKey")
    }

    // The notification names: `nonisolated class let …Notification: NSNotification.Name`
    // (Swift source cannot declare `class let`; `static let` reads the same at the use site).
    nonisolated public static let didBecomeActiveNotification = NSNotification.Name("UIApplicationDidBecomeActiveNotification")
    nonisolated public static let willResignActiveNotification = NSNotification.Name("UIApplicationWillResignActiveNotification")
    @available(iOS 4.0, *)
    nonisolated public static let didEnterBackgroundNotification = NSNotification.Name("UIApplicationDidEnterBackgroundNotification")
    @available(iOS 4.0, *)
    nonisolated public static let willEnterForegroundNotification = NSNotification.Name("UIApplicationWillEnterForegroundNotification")
    nonisolated public static let didFinishLaunchingNotification = NSNotification.Name("UIApplicationDidFinishLaunchingNotification")
    nonisolated public static let willTerminateNotification = NSNotification.Name("UIApplicationWillTerminateNotification")
    @available(iOS 4.0, *)
    nonisolated public static let protectedDataDidBecomeAvailableNotification = NSNotification.Name("UIApplicationProtectedDataDidBecomeAvailable")
    @available(iOS 4.0, *)
    nonisolated public static let protectedDataWillBecomeUnavailableNotification = NSNotification.Name("UIApplicationProtectedDataWillBecomeUnavailable")
    nonisolated public static let didReceiveMemoryWarningNotification = NSNotification.Name("UIApplicationDidReceiveMemoryWarningNotification")
}

/// `struct UIBackgroundTaskIdentifier : Hashable, Equatable, RawRepresentable, Sendable`
@available(iOS 4.0, *)
public struct UIBackgroundTaskIdentifier: Hashable, RawRepresentable, Sendable {
    public let rawValue: Int
    public init(rawValue: Int) { self.rawValue = rawValue }
    /// `static let invalid: UIBackgroundTaskIdentifier`
    public static let invalid = UIBackgroundTaskIdentifier(rawValue: 0)
}

/// `enum UIBackgroundFetchResult : UInt, @unchecked Sendable`
@available(iOS 7.0, *)
public enum UIBackgroundFetchResult: UInt, @unchecked Sendable {
    case newData = 0
    case noData = 1
    case failed = 2
}
