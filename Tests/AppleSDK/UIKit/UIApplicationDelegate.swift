// Stand-in for the part of Apple's SDK that the client SDK's adapters use (scripts/typecheck-apple.sh;
// docs/client-sdk.md, "What the type-check proves"). Declarations only: it is type-checked against,
// never linked or run. Kept to Apple's documented declarations (names, argument labels,
// optionality, isolation, Sendable, availability); where Linux cannot express one, the comment
// beside it says how it differs.
//
// UIKit: UIApplicationDelegate.
//   https://developer.apple.com/documentation/uikit/uiapplicationdelegate
//   https://developer.apple.com/documentation/uikit/uiapplicationdelegate/main()
//   https://developer.apple.com/documentation/uikit/uiapplicationdelegate/application(_:didfinishlaunchingwithoptions:)
//   https://developer.apple.com/documentation/uikit/uiapplicationdelegate/application(_:didregisterforremotenotificationswithdevicetoken:)
//   https://developer.apple.com/documentation/uikit/uiapplicationdelegate/application(_:didfailtoregisterforremotenotificationswitherror:)
//   https://developer.apple.com/documentation/uikit/uiapplicationdelegate/application(_:didreceiveremotenotification:fetchcompletionhandler:)
//
// Every method of Apple's protocol is `optional` (Objective-C). Linux has no `@objc optional`, so
// here each is a requirement with a default implementation. Differs: a method that nearly matches
// one (a wrong label or type) draws "nearly matches optional requirement" on Apple platforms and
// nothing here, so a misspelt delegate method is not caught; and Apple's completion-handler and
// async forms are one Objective-C method, so implementing both is an error there, not here.

/// `@MainActor protocol UIApplicationDelegate : NSObjectProtocol`
@MainActor
public protocol UIApplicationDelegate: NSObjectProtocol {
    /// `optional var window: UIWindow? { get set }`
    @available(iOS 5.0, *)
    var window: UIWindow? { get set }

    /// `optional func application(_ application: UIApplication, willFinishLaunchingWithOptions
    /// launchOptions: [UIApplication.LaunchOptionsKey : Any]? = nil) -> Bool`
    @available(iOS 6.0, *)
    func application(
        _ application: UIApplication, willFinishLaunchingWithOptions launchOptions: [UIApplication.LaunchOptionsKey: Any]?
    ) -> Bool

    /// `optional func application(_ application: UIApplication, didFinishLaunchingWithOptions
    /// launchOptions: [UIApplication.LaunchOptionsKey : Any]? = nil) -> Bool`
    @available(iOS 3.0, *)
    func application(
        _ application: UIApplication, didFinishLaunchingWithOptions launchOptions: [UIApplication.LaunchOptionsKey: Any]?
    ) -> Bool

    /// `optional func applicationDidBecomeActive(_ application: UIApplication)`
    func applicationDidBecomeActive(_ application: UIApplication)
    /// `optional func applicationWillResignActive(_ application: UIApplication)`
    func applicationWillResignActive(_ application: UIApplication)
    /// `optional func applicationDidEnterBackground(_ application: UIApplication)`
    @available(iOS 4.0, *)
    func applicationDidEnterBackground(_ application: UIApplication)
    /// `optional func applicationWillEnterForeground(_ application: UIApplication)`
    @available(iOS 4.0, *)
    func applicationWillEnterForeground(_ application: UIApplication)
    /// `optional func applicationWillTerminate(_ application: UIApplication)`
    func applicationWillTerminate(_ application: UIApplication)
    /// `optional func applicationProtectedDataWillBecomeUnavailable(_ application: UIApplication)`
    @available(iOS 4.0, *)
    func applicationProtectedDataWillBecomeUnavailable(_ application: UIApplication)
    /// `optional func applicationProtectedDataDidBecomeAvailable(_ application: UIApplication)`
    @available(iOS 4.0, *)
    func applicationProtectedDataDidBecomeAvailable(_ application: UIApplication)

    /// `optional func application(_ application: UIApplication,
    /// didRegisterForRemoteNotificationsWithDeviceToken deviceToken: Data)`
    @available(iOS 3.0, *)
    func application(_ application: UIApplication, didRegisterForRemoteNotificationsWithDeviceToken deviceToken: Data)

    /// `optional func application(_ application: UIApplication,
    /// didFailToRegisterForRemoteNotificationsWithError error: any Error)`
    @available(iOS 3.0, *)
    func application(_ application: UIApplication, didFailToRegisterForRemoteNotificationsWithError error: any Error)

    /// `optional func application(_ application: UIApplication, didReceiveRemoteNotification userInfo:
    /// [AnyHashable : Any], fetchCompletionHandler completionHandler: @escaping (UIBackgroundFetchResult) -> Void)`
    @available(iOS 7.0, *)
    func application(
        _ application: UIApplication, didReceiveRemoteNotification userInfo: [AnyHashable: Any],
        fetchCompletionHandler completionHandler: @escaping (UIBackgroundFetchResult) -> Void
    )

    /// The async form of the same method: `optional func application(_ application: UIApplication,
    /// didReceiveRemoteNotification userInfo: [AnyHashable : Any]) async -> UIBackgroundFetchResult`
    @available(iOS 7.0, *)
    func application(
        _ application: UIApplication, didReceiveRemoteNotification userInfo: [AnyHashable: Any]
    ) async -> UIBackgroundFetchResult

    /// `optional func application(_ application: UIApplication, configurationForConnecting
    /// connectingSceneSession: UISceneSession, options: UIScene.ConnectionOptions) -> UISceneConfiguration`
    @available(iOS 13.0, *)
    func application(
        _ application: UIApplication, configurationForConnecting connectingSceneSession: UISceneSession,
        options: UIScene.ConnectionOptions
    ) -> UISceneConfiguration
}

extension UIApplicationDelegate {
    public var window: UIWindow? {
        get { nil }
        set {}
    }

    public func application(
        _ application: UIApplication, willFinishLaunchingWithOptions launchOptions: [UIApplication.LaunchOptionsKey: Any]?
    ) -> Bool { true }

    public func application(
        _ application: UIApplication, didFinishLaunchingWithOptions launchOptions: [UIApplication.LaunchOptionsKey: Any]?
    ) -> Bool { true }

    public func applicationDidBecomeActive(_ application: UIApplication) {}
    public func applicationWillResignActive(_ application: UIApplication) {}
    public func applicationDidEnterBackground(_ application: UIApplication) {}
    public func applicationWillEnterForeground(_ application: UIApplication) {}
    public func applicationWillTerminate(_ application: UIApplication) {}
    public func applicationProtectedDataWillBecomeUnavailable(_ application: UIApplication) {}
    public func applicationProtectedDataDidBecomeAvailable(_ application: UIApplication) {}
    public func application(_ application: UIApplication, didRegisterForRemoteNotificationsWithDeviceToken deviceToken: Data) {}
    public func application(_ application: UIApplication, didFailToRegisterForRemoteNotificationsWithError error: any Error) {}

    public func application(
        _ application: UIApplication, didReceiveRemoteNotification userInfo: [AnyHashable: Any],
        fetchCompletionHandler completionHandler: @escaping (UIBackgroundFetchResult) -> Void
    ) {}

    public func application(
        _ application: UIApplication, didReceiveRemoteNotification userInfo: [AnyHashable: Any]
    ) async -> UIBackgroundFetchResult { .noData }

    public func application(
        _ application: UIApplication, configurationForConnecting connectingSceneSession: UISceneSession,
        options: UIScene.ConnectionOptions
    ) -> UISceneConfiguration {
        fatalError("stand-in")
    }

    /// `@MainActor @preconcurrency static func main()`: lets `@main` mark the app delegate.
    @MainActor @preconcurrency
    public static func main() { fatalError("stand-in") }
}
