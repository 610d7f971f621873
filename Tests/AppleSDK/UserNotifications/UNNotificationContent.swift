// Stand-in for the part of Apple's SDK that the client SDK's adapters use (scripts/typecheck-apple.sh;
// docs/client-sdk.md, "What the type-check proves"). Declarations only: it is type-checked against,
// never linked or run. Kept to Apple's documented declarations (names, argument labels,
// optionality, isolation, Sendable, availability); where Linux cannot express one, the comment
// beside it says how it differs.
//
// UserNotifications: notification content, sounds, attachments.
//   https://developer.apple.com/documentation/usernotifications/unnotificationcontent
//   https://developer.apple.com/documentation/usernotifications/unmutablenotificationcontent
//   https://developer.apple.com/documentation/usernotifications/unnotificationcontent/updating(from:)
//   https://developer.apple.com/documentation/usernotifications/unnotificationcontentproviding
//   https://developer.apple.com/documentation/usernotifications/unnotificationinterruptionlevel
//   https://developer.apple.com/documentation/usernotifications/unnotificationsound
//   https://developer.apple.com/documentation/usernotifications/unnotificationsoundname
//   https://developer.apple.com/documentation/usernotifications/unnotificationattachment
// See UNUserNotificationCenter.swift on Sendable.

/// `protocol UNNotificationContentProviding : NSObjectProtocol`
@available(iOS 15.0, *)
public protocol UNNotificationContentProviding: NSObjectProtocol {}

/// `enum UNNotificationInterruptionLevel : UInt, @unchecked Sendable`
@available(iOS 15.0, *)
public enum UNNotificationInterruptionLevel: UInt, @unchecked Sendable {
    case passive = 0
    case active = 1
    case timeSensitive = 2
    case critical = 3
}

/// `class UNNotificationContent : NSObject` (`NSCopying`, `NSMutableCopying`, `NSSecureCoding`)
@available(iOS 10.0, *)
open class UNNotificationContent: NSObject, NSCopying, NSMutableCopying {
    public override init() {}

    /// `var attachments: [UNNotificationAttachment] { get }`
    open var attachments: [UNNotificationAttachment] { fatalError("stand-in") }
    /// `@NSCopying var badge: NSNumber? { get }`
    open var badge: NSNumber? { fatalError("stand-in") }
    /// `var body: String { get }`
    open var body: String { fatalError("stand-in") }
    /// `var categoryIdentifier: String { get }`
    open var categoryIdentifier: String { fatalError("stand-in") }
    /// `var launchImageName: String { get }`
    open var launchImageName: String { fatalError("stand-in") }
    /// `@NSCopying var sound: UNNotificationSound? { get }`
    open var sound: UNNotificationSound? { fatalError("stand-in") }
    /// `var subtitle: String { get }`
    open var subtitle: String { fatalError("stand-in") }
    /// `var threadIdentifier: String { get }`
    open var threadIdentifier: String { fatalError("stand-in") }
    /// `var title: String { get }`
    open var title: String { fatalError("stand-in") }
    /// `var userInfo: [AnyHashable : Any] { get }`
    open var userInfo: [AnyHashable: Any] { fatalError("stand-in") }
    /// `var targetContentIdentifier: String? { get }`
    @available(iOS 13.0, *)
    open var targetContentIdentifier: String? { fatalError("stand-in") }
    /// `var interruptionLevel: UNNotificationInterruptionLevel { get }`
    @available(iOS 15.0, *)
    open var interruptionLevel: UNNotificationInterruptionLevel { fatalError("stand-in") }
    /// `var relevanceScore: Double { get }`
    @available(iOS 15.0, *)
    open var relevanceScore: Double { fatalError("stand-in") }
    /// `var filterCriteria: String? { get }`
    @available(iOS 16.0, *)
    open var filterCriteria: String? { fatalError("stand-in") }

    /// `func updating(from provider: any UNNotificationContentProviding) throws -> UNNotificationContent`
    @available(iOS 15.0, *)
    open func updating(from provider: any UNNotificationContentProviding) throws -> UNNotificationContent {
        fatalError("stand-in")
    }

    open func copy(with zone: NSZone? = nil) -> Any { fatalError("stand-in") }
    open func mutableCopy(with zone: NSZone? = nil) -> Any { fatalError("stand-in") }
}

/// `class UNMutableNotificationContent : UNNotificationContent`
@available(iOS 10.0, *)
open class UNMutableNotificationContent: UNNotificationContent {
    /// `var attachments: [UNNotificationAttachment] { get set }`
    open override var attachments: [UNNotificationAttachment] {
        get { fatalError("stand-in") }
        set { fatalError("stand-in") }
    }
    /// `@NSCopying var badge: NSNumber? { get set }`
    open override var badge: NSNumber? {
        get { fatalError("stand-in") }
        set { fatalError("stand-in") }
    }
    /// `var body: String { get set }`
    open override var body: String {
        get { fatalError("stand-in") }
        set { fatalError("stand-in") }
    }
    /// `var categoryIdentifier: String { get set }`
    open override var categoryIdentifier: String {
        get { fatalError("stand-in") }
        set { fatalError("stand-in") }
    }
    /// `var launchImageName: String { get set }`
    open override var launchImageName: String {
        get { fatalError("stand-in") }
        set { fatalError("stand-in") }
    }
    /// `@NSCopying var sound: UNNotificationSound? { get set }`
    open override var sound: UNNotificationSound? {
        get { fatalError("stand-in") }
        set { fatalError("stand-in") }
    }
    /// `var subtitle: String { get set }`
    open override var subtitle: String {
        get { fatalError("stand-in") }
        set { fatalError("stand-in") }
    }
    /// `var threadIdentifier: String { get set }`
    open override var threadIdentifier: String {
        get { fatalError("stand-in") }
        set { fatalError("stand-in") }
    }
    /// `var title: String { get set }`
    open override var title: String {
        get { fatalError("stand-in") }
        set { fatalError("stand-in") }
    }
    /// `var userInfo: [AnyHashable : Any] { get set }`
    open override var userInfo: [AnyHashable: Any] {
        get { fatalError("stand-in") }
        set { fatalError("stand-in") }
    }
    /// `var targetContentIdentifier: String? { get set }`
    @available(iOS 13.0, *)
    open override var targetContentIdentifier: String? {
        get { fatalError("stand-in") }
        set { fatalError("stand-in") }
    }
    /// `var interruptionLevel: UNNotificationInterruptionLevel { get set }`
    @available(iOS 15.0, *)
    open override var interruptionLevel: UNNotificationInterruptionLevel {
        get { fatalError("stand-in") }
        set { fatalError("stand-in") }
    }
    /// `var relevanceScore: Double { get set }`
    @available(iOS 15.0, *)
    open override var relevanceScore: Double {
        get { fatalError("stand-in") }
        set { fatalError("stand-in") }
    }
    /// `var filterCriteria: String? { get set }`
    @available(iOS 16.0, *)
    open override var filterCriteria: String? {
        get { fatalError("stand-in") }
        set { fatalError("stand-in") }
    }
}

/// `struct UNNotificationSoundName : Hashable, Equatable, RawRepresentable, @unchecked Sendable`
@available(iOS 10.0, *)
public struct UNNotificationSoundName: Hashable, RawRepresentable, @unchecked Sendable {
    public let rawValue: String
    public init(_ rawValue: String) { self.rawValue = rawValue }
    public init(rawValue: String) { self.rawValue = rawValue }
}

/// `class UNNotificationSound : NSObject` (`NSCopying`, `NSSecureCoding`)
@available(iOS 10.0, *)
open class UNNotificationSound: NSObject, NSCopying {
    /// `convenience init(named name: UNNotificationSoundName)` (`init()` is unavailable)
    public init(named name: UNNotificationSoundName) { fatalError("stand-in") }

    /// `class var \`default\`: UNNotificationSound { get }`
    open class var `default`: UNNotificationSound { fatalError("stand-in") }

    /// `class var defaultCritical: UNNotificationSound { get }`
    @available(iOS 12.0, *)
    open class var defaultCritical: UNNotificationSound { fatalError("stand-in") }

    open func copy(with zone: NSZone? = nil) -> Any { fatalError("stand-in") }
}

/// `class UNNotificationAttachment : NSObject` (`NSCopying`, `NSSecureCoding`)
@available(iOS 10.0, *)
open class UNNotificationAttachment: NSObject, NSCopying {
    /// `convenience init(identifier: String, url URL: URL, options: [AnyHashable : Any]? = nil) throws`
    public init(identifier: String, url URL: URL, options: [AnyHashable: Any]? = nil) throws { fatalError("stand-in") }

    /// `var identifier: String { get }`
    open var identifier: String { fatalError("stand-in") }
    /// `@NSCopying var url: URL { get }`
    open var url: URL { fatalError("stand-in") }
    /// `var type: String { get }`
    open var type: String { fatalError("stand-in") }

    open func copy(with zone: NSZone? = nil) -> Any { fatalError("stand-in") }
}
