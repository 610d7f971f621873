// Stand-in for the part of Apple's SDK that the client SDK's adapters use (scripts/typecheck-apple.sh;
// docs/client-sdk.md, "What the type-check proves"). Declarations only: it is type-checked against,
// never linked or run. Kept to Apple's documented declarations (names, argument labels,
// optionality, isolation, Sendable, availability); where Linux cannot express one, the comment
// beside it says how it differs.
//
// UIKit: UIResponder, UIView, UIWindow and the scene basics.
//   https://developer.apple.com/documentation/uikit/uiresponder
//   https://developer.apple.com/documentation/uikit/uiwindow
//   https://developer.apple.com/documentation/uikit/uiscene
//   https://developer.apple.com/documentation/uikit/uiscene/didactivatenotification (and siblings)
//   https://developer.apple.com/documentation/uikit/uiwindowscene
//   https://developer.apple.com/documentation/uikit/uiscenedelegate
//   https://developer.apple.com/documentation/uikit/uiscenesession
//   https://developer.apple.com/documentation/uikit/uisceneconfiguration
//
// Scene delegate methods are `optional` in Apple's protocols; here they are requirements with
// default implementations (see UIApplicationDelegate.swift). `UIScene.ConnectionOptions` omits
// the members that name other frameworks' types (its notification response, URL contexts).

/// `@MainActor class UIResponder : NSObject`
@MainActor
open class UIResponder: NSObject {}

/// `@MainActor class UIView : UIResponder` (nothing of it is used; `UIWindow` derives from it)
@MainActor
open class UIView: UIResponder {}

/// `@MainActor class UIWindow : UIView`
@MainActor
open class UIWindow: UIView {
    /// `init(windowScene: UIWindowScene)`
    @available(iOS 13.0, *)
    public init(windowScene: UIWindowScene) { fatalError("stand-in") }

    /// `weak var windowScene: UIWindowScene? { get set }`
    @available(iOS 13.0, *)
    open var windowScene: UIWindowScene? {
        get { fatalError("stand-in") }
        set { fatalError("stand-in") }
    }

    /// `func makeKeyAndVisible()`
    open func makeKeyAndVisible() { fatalError("stand-in") }
}

/// `@MainActor class UIScene : UIResponder`
@available(iOS 13.0, *)
@MainActor
open class UIScene: UIResponder {
    /// `var session: UISceneSession { get }`
    open var session: UISceneSession { fatalError("stand-in") }

    /// `var delegate: (any UISceneDelegate)? { get set }` (strong)
    open var delegate: (any UISceneDelegate)? {
        get { fatalError("stand-in") }
        set { fatalError("stand-in") }
    }

    /// `var activationState: UIScene.ActivationState { get }`
    open var activationState: UIScene.ActivationState { fatalError("stand-in") }

    /// `enum ActivationState : Int, @unchecked Sendable`
    public enum ActivationState: Int, @unchecked Sendable {
        case unattached = -1
        case foregroundActive = 0
        case foregroundInactive = 1
        case background = 2
    }

    /// `@MainActor class ConnectionOptions : NSObject`
    @MainActor
    open class ConnectionOptions: NSObject {}

    // `nonisolated class let …Notification: NSNotification.Name` (`static let` here: Swift source
    // cannot declare `class let`).
    nonisolated public static let willConnectNotification = NSNotification.Name("UISceneWillConnectNotification")
    nonisolated public static let didDisconnectNotification = NSNotification.Name("UISceneDidDisconnectNotification")
    nonisolated public static let didActivateNotification = NSNotification.Name("UISceneDidActivateNotification")
    nonisolated public static let willDeactivateNotification = NSNotification.Name("UISceneWillDeactivateNotification")
    nonisolated public static let willEnterForegroundNotification = NSNotification.Name("UISceneWillEnterForegroundNotification")
    nonisolated public static let didEnterBackgroundNotification = NSNotification.Name("UISceneDidEnterBackgroundNotification")
}

/// `@MainActor class UIWindowScene : UIScene`
@available(iOS 13.0, *)
@MainActor
open class UIWindowScene: UIScene {
    /// `var windows: [UIWindow] { get }`
    open var windows: [UIWindow] { fatalError("stand-in") }
}

/// `@MainActor class UISceneSession : NSObject`
@available(iOS 13.0, *)
@MainActor
open class UISceneSession: NSObject {
    /// `var scene: UIScene? { get }`
    open var scene: UIScene? { fatalError("stand-in") }
    /// `var role: UISceneSession.Role { get }`
    open var role: UISceneSession.Role { fatalError("stand-in") }
    /// `var configuration: UISceneConfiguration { get }`
    open var configuration: UISceneConfiguration { fatalError("stand-in") }
    /// `var persistentIdentifier: String { get }`
    open var persistentIdentifier: String { fatalError("stand-in") }

    /// `struct Role : Hashable, Equatable, RawRepresentable, @unchecked Sendable`
    public struct Role: Hashable, RawRepresentable, @unchecked Sendable {
        public let rawValue: String
        public init(rawValue: String) { self.rawValue = rawValue }
        /// `static let windowApplication: UISceneSession.Role`
        public static let windowApplication = Role(rawValue: "UIWindowSceneSessionRoleApplication")
    }
}

/// `@MainActor class UISceneConfiguration : NSObject`
@available(iOS 13.0, *)
@MainActor
open class UISceneConfiguration: NSObject {
    /// `init(name: String?, sessionRole: UISceneSession.Role)`
    public init(name: String?, sessionRole: UISceneSession.Role) { fatalError("stand-in") }
    /// `var name: String? { get }`
    open var name: String? { fatalError("stand-in") }
    /// `var role: UISceneSession.Role { get }`
    open var role: UISceneSession.Role { fatalError("stand-in") }
    /// `var delegateClass: AnyClass? { get set }`
    open var delegateClass: AnyClass? {
        get { fatalError("stand-in") }
        set { fatalError("stand-in") }
    }
}

/// `@MainActor protocol UISceneDelegate : NSObjectProtocol`
@available(iOS 13.0, *)
@MainActor
public protocol UISceneDelegate: NSObjectProtocol {
    /// `optional func scene(_ scene: UIScene, willConnectTo session: UISceneSession,
    /// options connectionOptions: UIScene.ConnectionOptions)`
    func scene(_ scene: UIScene, willConnectTo session: UISceneSession, options connectionOptions: UIScene.ConnectionOptions)
    /// `optional func sceneDidDisconnect(_ scene: UIScene)`
    func sceneDidDisconnect(_ scene: UIScene)
    /// `optional func sceneDidBecomeActive(_ scene: UIScene)`
    func sceneDidBecomeActive(_ scene: UIScene)
    /// `optional func sceneWillResignActive(_ scene: UIScene)`
    func sceneWillResignActive(_ scene: UIScene)
    /// `optional func sceneWillEnterForeground(_ scene: UIScene)`
    func sceneWillEnterForeground(_ scene: UIScene)
    /// `optional func sceneDidEnterBackground(_ scene: UIScene)`
    func sceneDidEnterBackground(_ scene: UIScene)
}

@available(iOS 13.0, *)
extension UISceneDelegate {
    public func scene(
        _ scene: UIScene, willConnectTo session: UISceneSession, options connectionOptions: UIScene.ConnectionOptions
    ) {}
    public func sceneDidDisconnect(_ scene: UIScene) {}
    public func sceneDidBecomeActive(_ scene: UIScene) {}
    public func sceneWillResignActive(_ scene: UIScene) {}
    public func sceneWillEnterForeground(_ scene: UIScene) {}
    public func sceneDidEnterBackground(_ scene: UIScene) {}
}

/// `@MainActor protocol UIWindowSceneDelegate : UISceneDelegate`
@available(iOS 13.0, *)
@MainActor
public protocol UIWindowSceneDelegate: UISceneDelegate {
    /// `optional var window: UIWindow? { get set }`
    var window: UIWindow? { get set }
}

@available(iOS 13.0, *)
extension UIWindowSceneDelegate {
    public var window: UIWindow? {
        get { nil }
        set {}
    }
}
