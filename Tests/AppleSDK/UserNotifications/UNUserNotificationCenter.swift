// Stand-in for the part of Apple's SDK that the client SDK's adapters use (scripts/typecheck-apple.sh;
// docs/client-sdk.md, "What the type-check proves"). Declarations only: it is type-checked against,
// never linked or run. Kept to Apple's documented declarations (names, argument labels,
// optionality, isolation, Sendable, availability); where Linux cannot express one, the comment
// beside it says how it differs.
//
// UserNotifications: the notification centre and its delegate.
//   https://developer.apple.com/documentation/usernotifications/unusernotificationcenter
//   https://developer.apple.com/documentation/usernotifications/unusernotificationcenter/current()
//   https://developer.apple.com/documentation/usernotifications/unusernotificationcenter/add(_:withcompletionhandler:)
//   https://developer.apple.com/documentation/usernotifications/unusernotificationcenter/getdeliverednotifications(completionhandler:)
//   https://developer.apple.com/documentation/usernotifications/unusernotificationcenter/setbadgecount(_:withcompletionhandler:)
//   https://developer.apple.com/documentation/usernotifications/unusernotificationcenter/requestauthorization(options:completionhandler:)
//   https://developer.apple.com/documentation/usernotifications/unusernotificationcenterdelegate
//   https://developer.apple.com/documentation/usernotifications/unusernotificationcenterdelegate/usernotificationcenter(_:willpresent:withcompletionhandler:)
//   https://developer.apple.com/documentation/usernotifications/unusernotificationcenterdelegate/usernotificationcenter(_:didreceive:withcompletionhandler:)
//
// Every method with a completion handler also has the async form Swift imports for it; both are
// declared. The delegate protocol is not actor-isolated (Apple declares no isolation on it); its
// completion handlers are `@Sendable`.
//
// Sendable: none of these classes is declared Sendable. Apple's pages show no conformance, and
// strict-concurrency builds against the iOS 26 SDK report `UNNotification` and
// `UNNotificationSettings` as not Sendable (e.g. mozilla-mobile/firefox-ios#29412); the option sets,
// enums and name structs are Sendable, as imported Objective-C value types are.

@_exported import Foundation

/// `class UNUserNotificationCenter : NSObject`
@available(iOS 10.0, *)
open class UNUserNotificationCenter: NSObject {
    // `init()` is unavailable (`NS_UNAVAILABLE`): the only way in is `current()`.
    private init(standIn: Void) {}

    /// `class func current() -> UNUserNotificationCenter`
    open class func current() -> UNUserNotificationCenter { fatalError("stand-in") }

    /// `weak var delegate: (any UNUserNotificationCenterDelegate)? { get set }`
    open var delegate: (any UNUserNotificationCenterDelegate)? {
        get { fatalError("stand-in") }
        set { fatalError("stand-in") }
    }

    /// `var supportsContentExtensions: Bool { get }`
    open var supportsContentExtensions: Bool { fatalError("stand-in") }

    /// `func requestAuthorization(options: UNAuthorizationOptions = [],
    /// completionHandler: @escaping @Sendable (Bool, (any Error)?) -> Void)`
    open func requestAuthorization(
        options: UNAuthorizationOptions = [], completionHandler: @escaping @Sendable (Bool, (any Error)?) -> Void
    ) {
        fatalError("stand-in")
    }

    /// `func requestAuthorization(options: UNAuthorizationOptions = []) async throws -> Bool`
    open func requestAuthorization(options: UNAuthorizationOptions = []) async throws -> Bool { fatalError("stand-in") }

    /// `func setNotificationCategories(_ categories: Set<UNNotificationCategory>)`
    open func setNotificationCategories(_ categories: Set<UNNotificationCategory>) { fatalError("stand-in") }

    /// `func getNotificationCategories(completionHandler: @escaping @Sendable (Set<UNNotificationCategory>) -> Void)`
    open func getNotificationCategories(completionHandler: @escaping @Sendable (Set<UNNotificationCategory>) -> Void) {
        fatalError("stand-in")
    }

    /// `func notificationCategories() async -> Set<UNNotificationCategory>`
    open func notificationCategories() async -> Set<UNNotificationCategory> { fatalError("stand-in") }

    /// `func getNotificationSettings(completionHandler: @escaping @Sendable (UNNotificationSettings) -> Void)`
    open func getNotificationSettings(completionHandler: @escaping @Sendable (UNNotificationSettings) -> Void) {
        fatalError("stand-in")
    }

    /// `func notificationSettings() async -> UNNotificationSettings`
    open func notificationSettings() async -> UNNotificationSettings { fatalError("stand-in") }

    /// `func add(_ request: UNNotificationRequest, withCompletionHandler completionHandler:
    /// (@Sendable ((any Error)?) -> Void)? = nil)`
    open func add(_ request: UNNotificationRequest, withCompletionHandler completionHandler: (@Sendable ((any Error)?) -> Void)? = nil) {
        fatalError("stand-in")
    }

    /// `func add(_ request: UNNotificationRequest) async throws`
    open func add(_ request: UNNotificationRequest) async throws { fatalError("stand-in") }

    /// `func getPendingNotificationRequests(completionHandler: @escaping @Sendable ([UNNotificationRequest]) -> Void)`
    open func getPendingNotificationRequests(completionHandler: @escaping @Sendable ([UNNotificationRequest]) -> Void) {
        fatalError("stand-in")
    }

    /// `func pendingNotificationRequests() async -> [UNNotificationRequest]`
    open func pendingNotificationRequests() async -> [UNNotificationRequest] { fatalError("stand-in") }

    /// `func removePendingNotificationRequests(withIdentifiers identifiers: [String])`
    open func removePendingNotificationRequests(withIdentifiers identifiers: [String]) { fatalError("stand-in") }

    /// `func removeAllPendingNotificationRequests()`
    open func removeAllPendingNotificationRequests() { fatalError("stand-in") }

    /// `func getDeliveredNotifications(completionHandler: @escaping @Sendable ([UNNotification]) -> Void)`
    open func getDeliveredNotifications(completionHandler: @escaping @Sendable ([UNNotification]) -> Void) {
        fatalError("stand-in")
    }

    /// `func deliveredNotifications() async -> [UNNotification]`
    open func deliveredNotifications() async -> [UNNotification] { fatalError("stand-in") }

    /// `func removeDeliveredNotifications(withIdentifiers identifiers: [String])`
    open func removeDeliveredNotifications(withIdentifiers identifiers: [String]) { fatalError("stand-in") }

    /// `func removeAllDeliveredNotifications()`
    open func removeAllDeliveredNotifications() { fatalError("stand-in") }

    /// `func setBadgeCount(_ newBadgeCount: Int, withCompletionHandler completionHandler:
    /// (@Sendable ((any Error)?) -> Void)? = nil)`
    @available(iOS 16.0, *)
    open func setBadgeCount(_ newBadgeCount: Int, withCompletionHandler completionHandler: (@Sendable ((any Error)?) -> Void)? = nil) {
        fatalError("stand-in")
    }

    /// `func setBadgeCount(_ newBadgeCount: Int) async throws`
    @available(iOS 16.0, *)
    open func setBadgeCount(_ newBadgeCount: Int) async throws { fatalError("stand-in") }
}

/// `protocol UNUserNotificationCenterDelegate : NSObjectProtocol`
///
/// Every method is `optional` in Apple's protocol (Objective-C). Linux has no `@objc optional`, so
/// here each is a requirement with a default implementation. Differs: a method that nearly matches
/// one (a wrong label or type) draws "nearly matches optional requirement" on Apple platforms and
/// nothing here, so a misspelt delegate method is not caught; and Apple's completion-handler and
/// async forms are one Objective-C method, so implementing both is an error there, not here.
@available(iOS 10.0, *)
public protocol UNUserNotificationCenterDelegate: NSObjectProtocol {
    /// `optional func userNotificationCenter(_ center: UNUserNotificationCenter, willPresent notification:
    /// UNNotification, withCompletionHandler completionHandler: @escaping @Sendable (UNNotificationPresentationOptions) -> Void)`
    func userNotificationCenter(
        _ center: UNUserNotificationCenter, willPresent notification: UNNotification,
        withCompletionHandler completionHandler: @escaping @Sendable (UNNotificationPresentationOptions) -> Void
    )

    /// `optional func userNotificationCenter(_ center: UNUserNotificationCenter, willPresent notification:
    /// UNNotification) async -> UNNotificationPresentationOptions`
    func userNotificationCenter(
        _ center: UNUserNotificationCenter, willPresent notification: UNNotification
    ) async -> UNNotificationPresentationOptions

    /// `optional func userNotificationCenter(_ center: UNUserNotificationCenter, didReceive response:
    /// UNNotificationResponse, withCompletionHandler completionHandler: @escaping @Sendable () -> Void)`
    func userNotificationCenter(
        _ center: UNUserNotificationCenter, didReceive response: UNNotificationResponse,
        withCompletionHandler completionHandler: @escaping @Sendable () -> Void
    )

    /// `optional func userNotificationCenter(_ center: UNUserNotificationCenter, didReceive response:
    /// UNNotificationResponse) async`
    func userNotificationCenter(_ center: UNUserNotificationCenter, didReceive response: UNNotificationResponse) async

    /// `optional func userNotificationCenter(_ center: UNUserNotificationCenter, openSettingsFor notification: UNNotification?)`
    @available(iOS 12.0, *)
    func userNotificationCenter(_ center: UNUserNotificationCenter, openSettingsFor notification: UNNotification?)
}

@available(iOS 10.0, *)
extension UNUserNotificationCenterDelegate {
    public func userNotificationCenter(
        _ center: UNUserNotificationCenter, willPresent notification: UNNotification,
        withCompletionHandler completionHandler: @escaping @Sendable (UNNotificationPresentationOptions) -> Void
    ) {}

    public func userNotificationCenter(
        _ center: UNUserNotificationCenter, willPresent notification: UNNotification
    ) async -> UNNotificationPresentationOptions { [] }

    public func userNotificationCenter(
        _ center: UNUserNotificationCenter, didReceive response: UNNotificationResponse,
        withCompletionHandler completionHandler: @escaping @Sendable () -> Void
    ) {}

    public func userNotificationCenter(_ center: UNUserNotificationCenter, didReceive response: UNNotificationResponse) async {}

    public func userNotificationCenter(_ center: UNUserNotificationCenter, openSettingsFor notification: UNNotification?) {}
}

extension NSString {
    /// `class func localizedUserNotificationString(forKey key: String, arguments: [Any]?) -> String`
    @available(iOS 10.0, *)
    public class func localizedUserNotificationString(forKey key: String, arguments: [Any]?) -> String {
        fatalError("stand-in")
    }
}
