// Stand-in for the part of Apple's SDK that the client SDK's adapters use (scripts/typecheck-apple.sh;
// docs/client-sdk.md, "What the type-check proves"). Declarations only: it is type-checked against,
// never linked or run. Kept to Apple's documented declarations (names, argument labels,
// optionality, isolation, Sendable, availability); where Linux cannot express one, the comment
// beside it says how it differs.
//
// UserNotifications: authorization, settings, presentation options, categories and actions, the
// notification service extension.
//   https://developer.apple.com/documentation/usernotifications/unauthorizationoptions
//   https://developer.apple.com/documentation/usernotifications/unauthorizationstatus
//   https://developer.apple.com/documentation/usernotifications/unnotificationsettings
//   https://developer.apple.com/documentation/usernotifications/unnotificationpresentationoptions
//   https://developer.apple.com/documentation/usernotifications/unnotificationcategory
//   https://developer.apple.com/documentation/usernotifications/unnotificationaction
//   https://developer.apple.com/documentation/usernotifications/unnotificationserviceextension
//   https://developer.apple.com/documentation/usernotifications/unnotificationserviceextension/didreceive(_:withcontenthandler:)
// See UNUserNotificationCenter.swift on Sendable.

/// `struct UNAuthorizationOptions : OptionSet, @unchecked Sendable`
@available(iOS 10.0, *)
public struct UNAuthorizationOptions: OptionSet, @unchecked Sendable {
    public let rawValue: UInt
    public init(rawValue: UInt) { self.rawValue = rawValue }
    public static let badge = UNAuthorizationOptions(rawValue: 1 << 0)
    public static let sound = UNAuthorizationOptions(rawValue: 1 << 1)
    public static let alert = UNAuthorizationOptions(rawValue: 1 << 2)
    public static let carPlay = UNAuthorizationOptions(rawValue: 1 << 3)
    @available(iOS 12.0, *)
    public static let criticalAlert = UNAuthorizationOptions(rawValue: 1 << 4)
    @available(iOS 12.0, *)
    public static let providesAppNotificationSettings = UNAuthorizationOptions(rawValue: 1 << 5)
    @available(iOS 12.0, *)
    public static let provisional = UNAuthorizationOptions(rawValue: 1 << 6)
}

/// `enum UNAuthorizationStatus : Int, @unchecked Sendable`
@available(iOS 10.0, *)
public enum UNAuthorizationStatus: Int, @unchecked Sendable {
    case notDetermined = 0
    case denied = 1
    case authorized = 2
    @available(iOS 12.0, *)
    case provisional = 3
    @available(iOS 14.0, *)
    case ephemeral = 4
}

/// `enum UNNotificationSetting : Int, @unchecked Sendable`
@available(iOS 10.0, *)
public enum UNNotificationSetting: Int, @unchecked Sendable {
    case notSupported = 0
    case disabled = 1
    case enabled = 2
}

/// `enum UNAlertStyle : Int, @unchecked Sendable`
@available(iOS 10.0, *)
public enum UNAlertStyle: Int, @unchecked Sendable {
    case none = 0
    case banner = 1
    case alert = 2
}

/// `class UNNotificationSettings : NSObject` (`NSCopying`, `NSSecureCoding`)
@available(iOS 10.0, *)
open class UNNotificationSettings: NSObject, NSCopying {
    private init(standIn: Void) {}

    /// `var authorizationStatus: UNAuthorizationStatus { get }`
    open var authorizationStatus: UNAuthorizationStatus { fatalError("stand-in") }
    /// `var soundSetting: UNNotificationSetting { get }`
    open var soundSetting: UNNotificationSetting { fatalError("stand-in") }
    /// `var badgeSetting: UNNotificationSetting { get }`
    open var badgeSetting: UNNotificationSetting { fatalError("stand-in") }
    /// `var alertSetting: UNNotificationSetting { get }`
    open var alertSetting: UNNotificationSetting { fatalError("stand-in") }
    /// `var notificationCenterSetting: UNNotificationSetting { get }`
    open var notificationCenterSetting: UNNotificationSetting { fatalError("stand-in") }
    /// `var lockScreenSetting: UNNotificationSetting { get }`
    open var lockScreenSetting: UNNotificationSetting { fatalError("stand-in") }
    /// `var alertStyle: UNAlertStyle { get }`
    open var alertStyle: UNAlertStyle { fatalError("stand-in") }
    /// `var timeSensitiveSetting: UNNotificationSetting { get }`
    @available(iOS 15.0, *)
    open var timeSensitiveSetting: UNNotificationSetting { fatalError("stand-in") }
    /// `var criticalAlertSetting: UNNotificationSetting { get }`
    @available(iOS 12.0, *)
    open var criticalAlertSetting: UNNotificationSetting { fatalError("stand-in") }
    /// `var providesAppNotificationSettings: Bool { get }`
    @available(iOS 12.0, *)
    open var providesAppNotificationSettings: Bool { fatalError("stand-in") }

    open func copy(with zone: NSZone? = nil) -> Any { fatalError("stand-in") }
}

/// `struct UNNotificationPresentationOptions : OptionSet, @unchecked Sendable`
@available(iOS 10.0, *)
public struct UNNotificationPresentationOptions: OptionSet, @unchecked Sendable {
    public let rawValue: UInt
    public init(rawValue: UInt) { self.rawValue = rawValue }
    public static let badge = UNNotificationPresentationOptions(rawValue: 1 << 0)
    public static let sound = UNNotificationPresentationOptions(rawValue: 1 << 1)
    @available(iOS, introduced: 10.0, deprecated: 14.0)
    public static let alert = UNNotificationPresentationOptions(rawValue: 1 << 2)
    @available(iOS 14.0, *)
    public static let list = UNNotificationPresentationOptions(rawValue: 1 << 3)
    @available(iOS 14.0, *)
    public static let banner = UNNotificationPresentationOptions(rawValue: 1 << 4)
}

/// `struct UNNotificationCategoryOptions : OptionSet, @unchecked Sendable`
@available(iOS 10.0, *)
public struct UNNotificationCategoryOptions: OptionSet, @unchecked Sendable {
    public let rawValue: UInt
    public init(rawValue: UInt) { self.rawValue = rawValue }
    public static let customDismissAction = UNNotificationCategoryOptions(rawValue: 1 << 0)
    public static let allowInCarPlay = UNNotificationCategoryOptions(rawValue: 1 << 1)
    @available(iOS 11.0, *)
    public static let hiddenPreviewsShowTitle = UNNotificationCategoryOptions(rawValue: 1 << 2)
    @available(iOS 11.0, *)
    public static let hiddenPreviewsShowSubtitle = UNNotificationCategoryOptions(rawValue: 1 << 3)
}

/// `class UNNotificationCategory : NSObject` (`NSCopying`, `NSSecureCoding`)
@available(iOS 10.0, *)
open class UNNotificationCategory: NSObject, NSCopying {
    /// `convenience init(identifier: String, actions: [UNNotificationAction], intentIdentifiers: [String],
    /// options: UNNotificationCategoryOptions = [])`
    public init(
        identifier: String, actions: [UNNotificationAction], intentIdentifiers: [String],
        options: UNNotificationCategoryOptions = []
    ) {
        fatalError("stand-in")
    }

    /// `convenience init(identifier: String, actions: [UNNotificationAction], intentIdentifiers: [String],
    /// hiddenPreviewsBodyPlaceholder: String, options: UNNotificationCategoryOptions = [])`
    @available(iOS 11.0, *)
    public convenience init(
        identifier: String, actions: [UNNotificationAction], intentIdentifiers: [String],
        hiddenPreviewsBodyPlaceholder: String, options: UNNotificationCategoryOptions = []
    ) {
        fatalError("stand-in")
    }

    /// `var identifier: String { get }`
    open var identifier: String { fatalError("stand-in") }
    /// `var actions: [UNNotificationAction] { get }`
    open var actions: [UNNotificationAction] { fatalError("stand-in") }
    /// `var intentIdentifiers: [String] { get }`
    open var intentIdentifiers: [String] { fatalError("stand-in") }
    /// `var options: UNNotificationCategoryOptions { get }`
    open var options: UNNotificationCategoryOptions { fatalError("stand-in") }

    open func copy(with zone: NSZone? = nil) -> Any { fatalError("stand-in") }
}

/// `struct UNNotificationActionOptions : OptionSet, @unchecked Sendable`
@available(iOS 10.0, *)
public struct UNNotificationActionOptions: OptionSet, @unchecked Sendable {
    public let rawValue: UInt
    public init(rawValue: UInt) { self.rawValue = rawValue }
    public static let authenticationRequired = UNNotificationActionOptions(rawValue: 1 << 0)
    public static let destructive = UNNotificationActionOptions(rawValue: 1 << 1)
    public static let foreground = UNNotificationActionOptions(rawValue: 1 << 2)
}

/// `class UNNotificationAction : NSObject` (`NSCopying`, `NSSecureCoding`)
@available(iOS 10.0, *)
open class UNNotificationAction: NSObject, NSCopying {
    /// `convenience init(identifier: String, title: String, options: UNNotificationActionOptions = [])`
    public init(identifier: String, title: String, options: UNNotificationActionOptions = []) { fatalError("stand-in") }

    /// `var identifier: String { get }`
    open var identifier: String { fatalError("stand-in") }
    /// `var title: String { get }`
    open var title: String { fatalError("stand-in") }
    /// `var options: UNNotificationActionOptions { get }`
    open var options: UNNotificationActionOptions { fatalError("stand-in") }

    open func copy(with zone: NSZone? = nil) -> Any { fatalError("stand-in") }
}

/// `class UNTextInputNotificationAction : UNNotificationAction`
@available(iOS 10.0, *)
open class UNTextInputNotificationAction: UNNotificationAction {
    /// `convenience init(identifier: String, title: String, options: UNNotificationActionOptions = [],
    /// textInputButtonTitle: String, textInputPlaceholder: String)`
    public convenience init(
        identifier: String, title: String, options: UNNotificationActionOptions = [], textInputButtonTitle: String,
        textInputPlaceholder: String
    ) {
        fatalError("stand-in")
    }
}

/// `class UNNotificationServiceExtension : NSObject`
@available(iOS 10.0, *)
open class UNNotificationServiceExtension: NSObject {
    public override init() {}

    /// `func didReceive(_ request: UNNotificationRequest, withContentHandler contentHandler:
    /// @escaping (UNNotificationContent) -> Void)`
    open func didReceive(
        _ request: UNNotificationRequest, withContentHandler contentHandler: @escaping (UNNotificationContent) -> Void
    ) {
        fatalError("stand-in")
    }

    /// `func serviceExtensionTimeWillExpire()`
    open func serviceExtensionTimeWillExpire() { fatalError("stand-in") }
}
