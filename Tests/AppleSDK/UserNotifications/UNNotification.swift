// Stand-in for the part of Apple's SDK that the client SDK's adapters use (scripts/typecheck-apple.sh;
// docs/client-sdk.md, "What the type-check proves"). Declarations only: it is type-checked against,
// never linked or run. Kept to Apple's documented declarations (names, argument labels,
// optionality, isolation, Sendable, availability); where Linux cannot express one, the comment
// beside it says how it differs.
//
// UserNotifications: notifications, requests, responses, triggers.
//   https://developer.apple.com/documentation/usernotifications/unnotification
//   https://developer.apple.com/documentation/usernotifications/unnotificationrequest
//   https://developer.apple.com/documentation/usernotifications/unnotificationrequest/init(identifier:content:trigger:)
//   https://developer.apple.com/documentation/usernotifications/unnotificationresponse
//   https://developer.apple.com/documentation/usernotifications/untextinputnotificationresponse
//   https://developer.apple.com/documentation/usernotifications/unnotificationdefaultactionidentifier
//   https://developer.apple.com/documentation/usernotifications/unnotificationdismissactionidentifier
//   https://developer.apple.com/documentation/usernotifications/unnotificationtrigger
// `NSSecureCoding` conformances are left out (nothing here encodes); see UNUserNotificationCenter.swift
// on Sendable.

/// `let UNNotificationDefaultActionIdentifier: String`
@available(iOS 10.0, *)
public let UNNotificationDefaultActionIdentifier: String = "com.apple.UNNotificationDefaultActionIdentifier"

/// `let UNNotificationDismissActionIdentifier: String`
@available(iOS 10.0, *)
public let UNNotificationDismissActionIdentifier: String = "com.apple.UNNotificationDismissActionIdentifier"

/// `class UNNotification : NSObject` (`NSCopying`, `NSSecureCoding`)
@available(iOS 10.0, *)
open class UNNotification: NSObject, NSCopying {
    // `init()` is unavailable: notifications come from the system.
    private init(standIn: Void) {}

    /// `@NSCopying var date: Date { get }`
    open var date: Date { fatalError("stand-in") }
    /// `@NSCopying var request: UNNotificationRequest { get }`
    open var request: UNNotificationRequest { fatalError("stand-in") }

    open func copy(with zone: NSZone? = nil) -> Any { fatalError("stand-in") }
}

/// `class UNNotificationRequest : NSObject` (`NSCopying`, `NSSecureCoding`)
@available(iOS 10.0, *)
open class UNNotificationRequest: NSObject, NSCopying {
    /// `convenience init(identifier: String, content: UNNotificationContent, trigger: UNNotificationTrigger?)`
    public init(identifier: String, content: UNNotificationContent, trigger: UNNotificationTrigger?) {
        fatalError("stand-in")
    }

    /// `var identifier: String { get }`
    open var identifier: String { fatalError("stand-in") }
    /// `@NSCopying var content: UNNotificationContent { get }`
    open var content: UNNotificationContent { fatalError("stand-in") }
    /// `@NSCopying var trigger: UNNotificationTrigger? { get }`
    open var trigger: UNNotificationTrigger? { fatalError("stand-in") }

    open func copy(with zone: NSZone? = nil) -> Any { fatalError("stand-in") }
}

/// `class UNNotificationResponse : NSObject` (`NSCopying`, `NSSecureCoding`)
@available(iOS 10.0, *)
open class UNNotificationResponse: NSObject, NSCopying {
    // `init()` is unavailable: responses come from the system.
    init(standIn: Void) {}

    /// `@NSCopying var notification: UNNotification { get }`
    open var notification: UNNotification { fatalError("stand-in") }
    /// `var actionIdentifier: String { get }`
    open var actionIdentifier: String { fatalError("stand-in") }

    open func copy(with zone: NSZone? = nil) -> Any { fatalError("stand-in") }
}

/// `class UNTextInputNotificationResponse : UNNotificationResponse`
@available(iOS 10.0, *)
open class UNTextInputNotificationResponse: UNNotificationResponse {
    /// `var userText: String { get }`
    open var userText: String { fatalError("stand-in") }
}

/// `class UNNotificationTrigger : NSObject` (`NSCopying`, `NSSecureCoding`)
@available(iOS 10.0, *)
open class UNNotificationTrigger: NSObject, NSCopying {
    init(standIn: Void) {}

    /// `var repeats: Bool { get }`
    open var repeats: Bool { fatalError("stand-in") }

    open func copy(with zone: NSZone? = nil) -> Any { fatalError("stand-in") }
}

/// `class UNPushNotificationTrigger : UNNotificationTrigger`
@available(iOS 10.0, *)
open class UNPushNotificationTrigger: UNNotificationTrigger {}

/// `class UNTimeIntervalNotificationTrigger : UNNotificationTrigger`
@available(iOS 10.0, *)
open class UNTimeIntervalNotificationTrigger: UNNotificationTrigger {
    /// `convenience init(timeInterval: TimeInterval, repeats: Bool)`
    public init(timeInterval: TimeInterval, repeats: Bool) { fatalError("stand-in") }
    /// `var timeInterval: TimeInterval { get }`
    open var timeInterval: TimeInterval { fatalError("stand-in") }
}
