// Stand-in for the part of Apple's SDK that the client SDK's adapters use (scripts/typecheck-apple.sh;
// docs/client-sdk.md, "What the type-check proves"). Declarations only: it is type-checked against,
// never linked or run. Kept to Apple's documented declarations (names, argument labels,
// optionality, isolation, Sendable, availability); where Linux cannot express one, the comment
// beside it says how it differs.
//
// Intents: what a communication notification needs (`UNNotificationContent.updating(from:)` with an
// `INSendMessageIntent`).
//   https://developer.apple.com/documentation/intents/insendmessageintent
//   https://developer.apple.com/documentation/intents/insendmessageintent/init(recipients:outgoingmessagetype:content:speakablegroupname:conversationidentifier:servicename:sender:attachments:)
//   https://developer.apple.com/documentation/intents/inperson
//   https://developer.apple.com/documentation/intents/inperson/init(personhandle:namecomponents:displayname:image:contactidentifier:customidentifier:isme:suggestiontype:)
//   https://developer.apple.com/documentation/intents/inpersonhandle
//   https://developer.apple.com/documentation/intents/inimage
//   https://developer.apple.com/documentation/intents/inspeakablestring
//   https://developer.apple.com/documentation/intents/ininteraction
//   https://developer.apple.com/documentation/usernotifications/implementing-communication-notifications

@_exported import Foundation
import UserNotifications

/// `class INIntent : NSObject` (`NSCopying`, `NSSecureCoding`)
@available(iOS 10.0, *)
open class INIntent: NSObject, NSCopying {
    public override init() {}
    /// `var identifier: String? { get }`
    open var identifier: String? { fatalError("stand-in") }
    /// `var intentDescription: String? { get }`
    open var intentDescription: String? { fatalError("stand-in") }

    open func copy(with zone: NSZone? = nil) -> Any { fatalError("stand-in") }
}

/// Apple's Swift overlay declares `setImage(_:forParameterNamed:)` on this protocol, to which
/// `INIntent` conforms, so that the key path is rooted at the intent's own type.
@available(iOS 12.0, *)
public protocol _INIntentSetImageKeyPath {}

@available(iOS 12.0, *)
extension _INIntentSetImageKeyPath {
    /// `func setImage<Value>(_ image: INImage?, forParameterNamed parameterName: KeyPath<Self, Value>)`
    public func setImage<Value>(_ image: INImage?, forParameterNamed parameterName: KeyPath<Self, Value>) {
        fatalError("stand-in")
    }

    /// `func image<Value>(forParameterNamed parameterName: KeyPath<Self, Value>) -> INImage?`
    public func image<Value>(forParameterNamed parameterName: KeyPath<Self, Value>) -> INImage? {
        fatalError("stand-in")
    }
}

@available(iOS 12.0, *)
extension INIntent: _INIntentSetImageKeyPath {}

/// `class INIntentResponse : NSObject`
@available(iOS 10.0, *)
open class INIntentResponse: NSObject {
    public override init() {}
}

/// `enum INOutgoingMessageType : Int, @unchecked Sendable`
@available(iOS 11.0, *)
public enum INOutgoingMessageType: Int, @unchecked Sendable {
    case unknown = 0
    case outgoingMessageText = 1
    case outgoingMessageAudio = 2
}

/// `class INSendMessageAttachment : NSObject`
@available(iOS 14.0, *)
open class INSendMessageAttachment: NSObject {
    private init(standIn: Void) {}
}

/// `class INSendMessageIntent : INIntent`
@available(iOS 10.0, *)
open class INSendMessageIntent: INIntent {
    /// `init(recipients: [INPerson]?, outgoingMessageType: INOutgoingMessageType, content: String?,
    /// speakableGroupName: INSpeakableString?, conversationIdentifier: String?, serviceName: String?,
    /// sender: INPerson?, attachments: [INSendMessageAttachment]?)`
    @available(iOS 14.0, *)
    public init(
        recipients: [INPerson]?, outgoingMessageType: INOutgoingMessageType, content: String?,
        speakableGroupName: INSpeakableString?, conversationIdentifier: String?, serviceName: String?,
        sender: INPerson?, attachments: [INSendMessageAttachment]?
    ) {
        fatalError("stand-in")
    }

    /// `var recipients: [INPerson]? { get }`
    open var recipients: [INPerson]? { fatalError("stand-in") }
    /// `var outgoingMessageType: INOutgoingMessageType { get }`
    @available(iOS 11.0, *)
    open var outgoingMessageType: INOutgoingMessageType { fatalError("stand-in") }
    /// `var content: String? { get }`
    open var content: String? { fatalError("stand-in") }
    /// `var speakableGroupName: INSpeakableString? { get }`
    @available(iOS 11.0, *)
    open var speakableGroupName: INSpeakableString? { fatalError("stand-in") }
    /// `var conversationIdentifier: String? { get }`
    @available(iOS 11.0, *)
    open var conversationIdentifier: String? { fatalError("stand-in") }
    /// `var serviceName: String? { get }`
    open var serviceName: String? { fatalError("stand-in") }
    /// `var sender: INPerson? { get }`
    open var sender: INPerson? { fatalError("stand-in") }
}

/// `INSendMessageIntent` adopts `UNNotificationContentProviding` (iOS 15): what
/// `UNNotificationContent.updating(from:)` takes for a communication notification.
@available(iOS 15.0, *)
extension INSendMessageIntent: UNNotificationContentProviding {}

/// `enum INPersonSuggestionType : Int, @unchecked Sendable`
@available(iOS 12.0, *)
public enum INPersonSuggestionType: Int, @unchecked Sendable {
    case none = 0
    case socialProfile = 1
    case instantMessageAddress = 2
}

/// `class INPerson : NSObject` (`NSCopying`, `NSSecureCoding`)
@available(iOS 10.0, *)
open class INPerson: NSObject, NSCopying {
    /// `convenience init(personHandle: INPersonHandle, nameComponents: PersonNameComponents?,
    /// displayName: String?, image: INImage?, contactIdentifier: String?, customIdentifier: String?)`
    public init(
        personHandle: INPersonHandle, nameComponents: PersonNameComponents?, displayName: String?, image: INImage?,
        contactIdentifier: String?, customIdentifier: String?
    ) {
        fatalError("stand-in")
    }

    /// `init(personHandle: INPersonHandle, nameComponents: PersonNameComponents?, displayName: String?,
    /// image: INImage?, contactIdentifier: String?, customIdentifier: String?, isMe: Bool)`
    @available(iOS 12.0, *)
    public init(
        personHandle: INPersonHandle, nameComponents: PersonNameComponents?, displayName: String?, image: INImage?,
        contactIdentifier: String?, customIdentifier: String?, isMe: Bool
    ) {
        fatalError("stand-in")
    }

    /// `convenience init(personHandle: INPersonHandle, nameComponents: PersonNameComponents?,
    /// displayName: String?, image: INImage?, contactIdentifier: String?, customIdentifier: String?,
    /// isMe: Bool, suggestionType: INPersonSuggestionType)`
    @available(iOS 15.0, *)
    public convenience init(
        personHandle: INPersonHandle, nameComponents: PersonNameComponents?, displayName: String?, image: INImage?,
        contactIdentifier: String?, customIdentifier: String?, isMe: Bool, suggestionType: INPersonSuggestionType
    ) {
        fatalError("stand-in")
    }

    /// `@NSCopying var personHandle: INPersonHandle? { get }`
    open var personHandle: INPersonHandle? { fatalError("stand-in") }
    /// `var displayName: String { get }`
    open var displayName: String { fatalError("stand-in") }
    /// `@NSCopying var image: INImage? { get }`
    open var image: INImage? { fatalError("stand-in") }
    /// `var customIdentifier: String? { get }`
    open var customIdentifier: String? { fatalError("stand-in") }
    /// `var isMe: Bool { get }`
    @available(iOS 12.0, *)
    open var isMe: Bool { fatalError("stand-in") }

    open func copy(with zone: NSZone? = nil) -> Any { fatalError("stand-in") }
}

/// `enum INPersonHandleType : Int, @unchecked Sendable`
@available(iOS 10.0, *)
public enum INPersonHandleType: Int, @unchecked Sendable {
    case unknown = 0
    case emailAddress = 1
    case phoneNumber = 2
}

/// `class INPersonHandle : NSObject` (`NSCopying`, `NSSecureCoding`)
@available(iOS 10.0, *)
open class INPersonHandle: NSObject, NSCopying {
    /// `convenience init(value: String?, type: INPersonHandleType)`
    public init(value: String?, type: INPersonHandleType) { fatalError("stand-in") }

    /// `var value: String? { get }`
    open var value: String? { fatalError("stand-in") }
    /// `var type: INPersonHandleType { get }`
    open var type: INPersonHandleType { fatalError("stand-in") }

    open func copy(with zone: NSZone? = nil) -> Any { fatalError("stand-in") }
}

/// `class INImage : NSObject` (`NSCopying`, `NSSecureCoding`)
@available(iOS 10.0, *)
open class INImage: NSObject, NSCopying {
    /// `convenience init(named name: String)`
    public init(named name: String) { fatalError("stand-in") }
    /// `convenience init(imageData: Data)`
    public init(imageData: Data) { fatalError("stand-in") }
    /// `convenience init?(url URL: URL)`
    public init?(url URL: URL) { fatalError("stand-in") }

    open func copy(with zone: NSZone? = nil) -> Any { fatalError("stand-in") }
}

/// `class INSpeakableString : NSObject` (`INSpeakable`)
@available(iOS 10.0, *)
open class INSpeakableString: NSObject {
    /// `init(spokenPhrase: String)`
    @available(iOS 10.2, *)
    public init(spokenPhrase: String) { fatalError("stand-in") }
    /// `var spokenPhrase: String { get }`
    open var spokenPhrase: String { fatalError("stand-in") }
}

/// `enum INInteractionDirection : Int, @unchecked Sendable`
@available(iOS 10.0, *)
public enum INInteractionDirection: Int, @unchecked Sendable {
    case unspecified = 0
    case outgoing = 1
    case incoming = 2
}

/// `class INInteraction : NSObject` (`NSCopying`, `NSSecureCoding`)
@available(iOS 10.0, *)
open class INInteraction: NSObject, NSCopying {
    /// `init(intent: INIntent, response: INIntentResponse?)`
    public init(intent: INIntent, response: INIntentResponse?) { fatalError("stand-in") }

    /// `var direction: INInteractionDirection { get set }`
    open var direction: INInteractionDirection {
        get { fatalError("stand-in") }
        set { fatalError("stand-in") }
    }

    /// `func donate(completion: (@Sendable ((any Error)?) -> Void)? = nil)`
    open func donate(completion: (@Sendable ((any Error)?) -> Void)? = nil) { fatalError("stand-in") }

    /// `func donate() async throws`
    open func donate() async throws { fatalError("stand-in") }

    open func copy(with zone: NSZone? = nil) -> Any { fatalError("stand-in") }
}
