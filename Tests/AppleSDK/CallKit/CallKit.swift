// Stand-in for the part of Apple's SDK that the client SDK's adapters use (scripts/typecheck-apple.sh;
// docs/client-sdk.md, "What the type-check proves"). Declarations only: it is type-checked against,
// never linked or run. Kept to Apple's documented declarations (names, argument labels,
// optionality, isolation, Sendable, availability); where Linux cannot express one, the comment
// beside it says how it differs.
//
// CallKit.
//   https://developer.apple.com/documentation/callkit/cxprovider
//   https://developer.apple.com/documentation/callkit/cxprovider/reportnewincomingcall(with:update:completion:)
//   https://developer.apple.com/documentation/callkit/cxprovider/reportcall(with:endedat:reason:)
//   https://developer.apple.com/documentation/callkit/cxprovider/reportcall(with:updated:)
//   https://developer.apple.com/documentation/callkit/cxprovider/setdelegate(_:queue:)
//   https://developer.apple.com/documentation/callkit/cxprovider/reportnewincomingvoippushpayload(_:completion:)
//   https://developer.apple.com/documentation/callkit/cxproviderconfiguration
//   https://developer.apple.com/documentation/callkit/cxcallupdate
//   https://developer.apple.com/documentation/callkit/cxhandle
//   https://developer.apple.com/documentation/callkit/cxcallendedreason
//   https://developer.apple.com/documentation/callkit/cxerrorcodeincomingcallerror
//   https://developer.apple.com/documentation/callkit/cxproviderdelegate
//   https://developer.apple.com/documentation/callkit/cxanswercallaction
//   https://developer.apple.com/documentation/callkit/cxendcallaction
//
// The classes are plain (no actor, no `Sendable` shown); the completion of `reportNewIncomingCall`
// is `@Sendable`. The delegate's optional methods are requirements with default implementations
// (no `@objc optional` on Linux). `provider(_:didActivate:)` and `provider(_:didDeactivate:)` take an
// `AVAudioSession` (AVFAudio) and are left out.

@_exported import Foundation

/// `class CXProvider : NSObject`
@available(iOS 10.0, *)
open class CXProvider: NSObject {
    /// `init(configuration: CXProviderConfiguration)`
    public init(configuration: CXProviderConfiguration) { fatalError("stand-in") }

    /// `func setDelegate(_ delegate: (any CXProviderDelegate)?, queue: DispatchQueue?)`
    open func setDelegate(_ delegate: (any CXProviderDelegate)?, queue: DispatchQueue?) { fatalError("stand-in") }

    /// `func reportNewIncomingCall(with UUID: UUID, update: CXCallUpdate,
    /// completion: @escaping @Sendable ((any Error)?) -> Void)`
    open func reportNewIncomingCall(with UUID: UUID, update: CXCallUpdate, completion: @escaping @Sendable ((any Error)?) -> Void) {
        fatalError("stand-in")
    }

    /// `func reportNewIncomingCall(with UUID: UUID, update: CXCallUpdate) async throws`
    open func reportNewIncomingCall(with UUID: UUID, update: CXCallUpdate) async throws { fatalError("stand-in") }

    /// `func reportCall(with UUID: UUID, updated update: CXCallUpdate)`
    open func reportCall(with UUID: UUID, updated update: CXCallUpdate) { fatalError("stand-in") }

    /// `func reportCall(with UUID: UUID, endedAt dateEnded: Date?, reason endedReason: CXCallEndedReason)`
    open func reportCall(with UUID: UUID, endedAt dateEnded: Date?, reason endedReason: CXCallEndedReason) {
        fatalError("stand-in")
    }

    /// `func reportOutgoingCall(with UUID: UUID, startedConnectingAt dateStartedConnecting: Date?)`
    open func reportOutgoingCall(with UUID: UUID, startedConnectingAt dateStartedConnecting: Date?) { fatalError("stand-in") }

    /// `func reportOutgoingCall(with UUID: UUID, connectedAt dateConnected: Date?)`
    open func reportOutgoingCall(with UUID: UUID, connectedAt dateConnected: Date?) { fatalError("stand-in") }

    /// `@NSCopying var configuration: CXProviderConfiguration { get set }`
    open var configuration: CXProviderConfiguration {
        get { fatalError("stand-in") }
        set { fatalError("stand-in") }
    }

    /// `func invalidate()`
    open func invalidate() { fatalError("stand-in") }

    /// `func pendingCallActions(of callActionClass: AnyClass, withCall callUUID: UUID) -> [CXCallAction]`
    open func pendingCallActions(of callActionClass: AnyClass, withCall callUUID: UUID) -> [CXCallAction] {
        fatalError("stand-in")
    }

    /// `class func reportNewIncomingVoIPPushPayload(_ dictionaryPayload: [AnyHashable : Any],
    /// completion: (@Sendable ((any Error)?) -> Void)? = nil)` — for a notification service extension.
    @available(iOS 14.5, *)
    open class func reportNewIncomingVoIPPushPayload(
        _ dictionaryPayload: [AnyHashable: Any], completion: (@Sendable ((any Error)?) -> Void)? = nil
    ) {
        fatalError("stand-in")
    }

    /// `class func reportNewIncomingVoIPPushPayload(_ dictionaryPayload: [AnyHashable : Any]) async throws`
    @available(iOS 14.5, *)
    open class func reportNewIncomingVoIPPushPayload(_ dictionaryPayload: [AnyHashable: Any]) async throws {
        fatalError("stand-in")
    }
}

/// `class CXProviderConfiguration : NSObject` (`NSCopying`)
@available(iOS 10.0, *)
open class CXProviderConfiguration: NSObject, NSCopying {
    /// `init()`
    @available(iOS 14.0, *)
    public override init() {}

    /// `convenience init(localizedName: String)`
    @available(iOS, introduced: 10.0, deprecated: 14.0, message: "No longer supported")
    public convenience init(localizedName: String) { fatalError("stand-in") }

    /// `var localizedName: String? { get }`
    open var localizedName: String? { fatalError("stand-in") }
    /// `var ringtoneSound: String? { get set }`
    open var ringtoneSound: String? {
        get { fatalError("stand-in") }
        set { fatalError("stand-in") }
    }
    /// `var iconTemplateImageData: Data? { get set }`
    open var iconTemplateImageData: Data? {
        get { fatalError("stand-in") }
        set { fatalError("stand-in") }
    }
    /// `var maximumCallGroups: Int { get set }`
    open var maximumCallGroups: Int {
        get { fatalError("stand-in") }
        set { fatalError("stand-in") }
    }
    /// `var maximumCallsPerCallGroup: Int { get set }`
    open var maximumCallsPerCallGroup: Int {
        get { fatalError("stand-in") }
        set { fatalError("stand-in") }
    }
    /// `var includesCallsInRecents: Bool { get set }`
    @available(iOS 11.0, *)
    open var includesCallsInRecents: Bool {
        get { fatalError("stand-in") }
        set { fatalError("stand-in") }
    }
    /// `var supportsVideo: Bool { get set }`
    open var supportsVideo: Bool {
        get { fatalError("stand-in") }
        set { fatalError("stand-in") }
    }
    /// `var supportedHandleTypes: Set<CXHandle.HandleType> { get set }`
    open var supportedHandleTypes: Set<CXHandle.HandleType> {
        get { fatalError("stand-in") }
        set { fatalError("stand-in") }
    }

    open func copy(with zone: NSZone? = nil) -> Any { fatalError("stand-in") }
}

/// `class CXHandle : NSObject` (`NSCopying`, `NSSecureCoding`)
@available(iOS 10.0, *)
open class CXHandle: NSObject, NSCopying {
    /// `init(type: CXHandle.HandleType, value: String)`
    public init(type: CXHandle.HandleType, value: String) { fatalError("stand-in") }

    /// `var type: CXHandle.HandleType { get }`
    open var type: CXHandle.HandleType { fatalError("stand-in") }
    /// `var value: String { get }`
    open var value: String { fatalError("stand-in") }

    /// `enum HandleType : Int, @unchecked Sendable`
    public enum HandleType: Int, @unchecked Sendable {
        case generic = 1
        case phoneNumber = 2
        case emailAddress = 3
    }

    open func copy(with zone: NSZone? = nil) -> Any { fatalError("stand-in") }
}

/// `class CXCallUpdate : NSObject` (`NSCopying`)
@available(iOS 10.0, *)
open class CXCallUpdate: NSObject, NSCopying {
    public override init() {}

    /// `@NSCopying var remoteHandle: CXHandle? { get set }`
    open var remoteHandle: CXHandle? {
        get { fatalError("stand-in") }
        set { fatalError("stand-in") }
    }
    /// `var localizedCallerName: String? { get set }`
    open var localizedCallerName: String? {
        get { fatalError("stand-in") }
        set { fatalError("stand-in") }
    }
    /// `var supportsHolding: Bool { get set }`
    open var supportsHolding: Bool {
        get { fatalError("stand-in") }
        set { fatalError("stand-in") }
    }
    /// `var supportsGrouping: Bool { get set }`
    open var supportsGrouping: Bool {
        get { fatalError("stand-in") }
        set { fatalError("stand-in") }
    }
    /// `var supportsUngrouping: Bool { get set }`
    open var supportsUngrouping: Bool {
        get { fatalError("stand-in") }
        set { fatalError("stand-in") }
    }
    /// `var supportsDTMF: Bool { get set }`
    open var supportsDTMF: Bool {
        get { fatalError("stand-in") }
        set { fatalError("stand-in") }
    }
    /// `var hasVideo: Bool { get set }`
    open var hasVideo: Bool {
        get { fatalError("stand-in") }
        set { fatalError("stand-in") }
    }

    open func copy(with zone: NSZone? = nil) -> Any { fatalError("stand-in") }
}

/// `enum CXCallEndedReason : Int, @unchecked Sendable`
@available(iOS 10.0, *)
public enum CXCallEndedReason: Int, @unchecked Sendable {
    case failed = 1
    case remoteEnded = 2
    case unanswered = 3
    case answeredElsewhere = 4
    case declinedElsewhere = 5
}

/// `let CXErrorDomainIncomingCall: String`
@available(iOS 10.0, *)
public let CXErrorDomainIncomingCall: String = "com.apple.CallKit.error.incomingcall"

/// `struct CXErrorCodeIncomingCallError : CustomNSError, Hashable, Error` — the error
/// `reportNewIncomingCall` completes with when the system refuses a call. Match it as Swift imports
/// Objective-C error codes: `catch CXErrorCodeIncomingCallError.filteredByDoNotDisturb`, or
/// `(error as? CXErrorCodeIncomingCallError)?.code`.
@available(iOS 10.0, *)
public struct CXErrorCodeIncomingCallError: CustomNSError, Hashable, Error {
    public let code: Code

    public init(_ code: Code, userInfo: [String: Any] = [:]) { self.code = code }

    /// `static var errorDomain: String { get }`
    public static var errorDomain: String { CXErrorDomainIncomingCall }
    public var errorCode: Int { code.rawValue }
    public var errorUserInfo: [String: Any] { [:] }

    /// `enum Code : Int, @unchecked Sendable, Equatable`
    public enum Code: Int, @unchecked Sendable, Equatable {
        case unknown = 0
        case unentitled = 1
        case callUUIDAlreadyExists = 2
        case filteredByDoNotDisturb = 3
        case filteredByBlockList = 4
        // In newer SDKs; Apple's pages found give no description or version for these three.
        case filteredDuringRestrictedSharingMode = 5
        case callIsProtected = 6
        case filteredBySensitiveParticipants = 7
    }

    public static var unknown: Code { .unknown }
    public static var unentitled: Code { .unentitled }
    public static var callUUIDAlreadyExists: Code { .callUUIDAlreadyExists }
    public static var filteredByDoNotDisturb: Code { .filteredByDoNotDisturb }
    public static var filteredByBlockList: Code { .filteredByBlockList }
    public static var filteredDuringRestrictedSharingMode: Code { .filteredDuringRestrictedSharingMode }
    public static var callIsProtected: Code { .callIsProtected }
    public static var filteredBySensitiveParticipants: Code { .filteredBySensitiveParticipants }
}

/// What lets `catch CXErrorCodeIncomingCallError.filteredByDoNotDisturb` match (the standard
/// library gives Apple's imported error structs the same operator, through `_ErrorCodeProtocol`).
@available(iOS 10.0, *)
public func ~= (match: CXErrorCodeIncomingCallError.Code, error: any Error) -> Bool {
    (error as? CXErrorCodeIncomingCallError)?.code == match
}

/// `class CXAction : NSObject` (`NSCopying`, `NSSecureCoding`)
@available(iOS 10.0, *)
open class CXAction: NSObject, NSCopying {
    public override init() {}
    /// `var uuid: UUID { get }`
    open var uuid: UUID { fatalError("stand-in") }
    /// `var isComplete: Bool { get }`
    open var isComplete: Bool { fatalError("stand-in") }
    /// `var timeoutDate: Date { get }`
    open var timeoutDate: Date { fatalError("stand-in") }
    /// `func fulfill()`
    open func fulfill() { fatalError("stand-in") }
    /// `func fail()`
    open func fail() { fatalError("stand-in") }

    open func copy(with zone: NSZone? = nil) -> Any { fatalError("stand-in") }
}

/// `class CXCallAction : CXAction`
@available(iOS 10.0, *)
open class CXCallAction: CXAction {
    /// `init(call callUUID: UUID)`
    public init(call callUUID: UUID) { fatalError("stand-in") }
    /// `var callUUID: UUID { get }`
    open var callUUID: UUID { fatalError("stand-in") }
}

/// `class CXAnswerCallAction : CXCallAction`
@available(iOS 10.0, *)
open class CXAnswerCallAction: CXCallAction {
    /// `func fulfill(withDateConnected dateConnected: Date)`
    open func fulfill(withDateConnected dateConnected: Date) { fatalError("stand-in") }
}

/// `class CXEndCallAction : CXCallAction`
@available(iOS 10.0, *)
open class CXEndCallAction: CXCallAction {
    /// `func fulfill(withDateEnded dateEnded: Date)`
    open func fulfill(withDateEnded dateEnded: Date) { fatalError("stand-in") }
}

/// `class CXStartCallAction : CXCallAction`
@available(iOS 10.0, *)
open class CXStartCallAction: CXCallAction {
    /// `init(call callUUID: UUID, handle: CXHandle)`
    public init(call callUUID: UUID, handle: CXHandle) { fatalError("stand-in") }
    /// `@NSCopying var handle: CXHandle { get set }`
    open var handle: CXHandle {
        get { fatalError("stand-in") }
        set { fatalError("stand-in") }
    }
}

/// `protocol CXProviderDelegate : NSObjectProtocol`
@available(iOS 10.0, *)
public protocol CXProviderDelegate: NSObjectProtocol {
    /// Required: `func providerDidReset(_ provider: CXProvider)`
    func providerDidReset(_ provider: CXProvider)
    /// `optional func providerDidBegin(_ provider: CXProvider)`
    func providerDidBegin(_ provider: CXProvider)
    /// `optional func provider(_ provider: CXProvider, execute transaction: CXTransaction) -> Bool` is left out (CXTransaction).
    /// `optional func provider(_ provider: CXProvider, perform action: CXStartCallAction)`
    func provider(_ provider: CXProvider, perform action: CXStartCallAction)
    /// `optional func provider(_ provider: CXProvider, perform action: CXAnswerCallAction)`
    func provider(_ provider: CXProvider, perform action: CXAnswerCallAction)
    /// `optional func provider(_ provider: CXProvider, perform action: CXEndCallAction)`
    func provider(_ provider: CXProvider, perform action: CXEndCallAction)
    /// `optional func provider(_ provider: CXProvider, timedOutPerforming action: CXAction)`
    func provider(_ provider: CXProvider, timedOutPerforming action: CXAction)
}

@available(iOS 10.0, *)
extension CXProviderDelegate {
    public func providerDidBegin(_ provider: CXProvider) {}
    public func provider(_ provider: CXProvider, perform action: CXStartCallAction) {}
    public func provider(_ provider: CXProvider, perform action: CXAnswerCallAction) {}
    public func provider(_ provider: CXProvider, perform action: CXEndCallAction) {}
    public func provider(_ provider: CXProvider, timedOutPerforming action: CXAction) {}
}
