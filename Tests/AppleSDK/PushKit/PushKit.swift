// Stand-in for the part of Apple's SDK that the client SDK's adapters use (scripts/typecheck-apple.sh;
// docs/client-sdk.md, "What the type-check proves"). Declarations only: it is type-checked against,
// never linked or run. Kept to Apple's documented declarations (names, argument labels,
// optionality, isolation, Sendable, availability); where Linux cannot express one, the comment
// beside it says how it differs.
//
// PushKit.
//   https://developer.apple.com/documentation/pushkit/pkpushregistry
//   https://developer.apple.com/documentation/pushkit/pkpushregistry/init(queue:)
//   https://developer.apple.com/documentation/pushkit/pkpushregistrydelegate
//   https://developer.apple.com/documentation/pushkit/pkpushregistrydelegate/pushregistry(_:didupdate:for:)
//   https://developer.apple.com/documentation/pushkit/pkpushregistrydelegate/pushregistry(_:didreceiveincomingpushwith:for:completion:)
//   https://developer.apple.com/documentation/pushkit/pkpushregistrydelegate/pushregistry(_:didinvalidatepushtokenfor:)
//   https://developer.apple.com/documentation/pushkit/pkpushcredentials
//   https://developer.apple.com/documentation/pushkit/pkpushpayload
//   https://developer.apple.com/documentation/pushkit/pkpushtype/voip
//
// The classes are plain (no actor, no `Sendable` shown). The delegate's optional methods are
// requirements with default implementations here (no `@objc optional` on Linux); unlike on Apple
// platforms, a method that nearly matches one draws no warning.

@_exported import Foundation

/// `struct PKPushType : Hashable, Equatable, RawRepresentable, @unchecked Sendable`
@available(iOS 8.0, *)
public struct PKPushType: Hashable, RawRepresentable, @unchecked Sendable {
    public let rawValue: String
    public init(_ rawValue: String) { self.rawValue = rawValue }
    public init(rawValue: String) { self.rawValue = rawValue }
    /// `static let voIP: PKPushType`
    public static let voIP = PKPushType(rawValue: "PKPushTypeVoIP")
    /// `static let fileProvider: PKPushType`
    @available(iOS 11.0, *)
    public static let fileProvider = PKPushType(rawValue: "PKPushTypeFileProvider")
}

/// `class PKPushRegistry : NSObject`
@available(iOS 8.0, *)
open class PKPushRegistry: NSObject {
    /// `init(queue: DispatchQueue?)` (`init()` is unavailable)
    public init(queue: DispatchQueue?) { fatalError("stand-in") }

    /// `weak var delegate: (any PKPushRegistryDelegate)? { get set }`
    open var delegate: (any PKPushRegistryDelegate)? {
        get { fatalError("stand-in") }
        set { fatalError("stand-in") }
    }

    /// `var desiredPushTypes: Set<PKPushType>? { get set }`
    open var desiredPushTypes: Set<PKPushType>? {
        get { fatalError("stand-in") }
        set { fatalError("stand-in") }
    }

    /// `func pushToken(for type: PKPushType) -> Data?`
    open func pushToken(for type: PKPushType) -> Data? { fatalError("stand-in") }
}

/// `class PKPushCredentials : NSObject`
@available(iOS 8.0, *)
open class PKPushCredentials: NSObject {
    private init(standIn: Void) {}
    /// `var type: PKPushType { get }`
    open var type: PKPushType { fatalError("stand-in") }
    /// `var token: Data { get }`
    open var token: Data { fatalError("stand-in") }
}

/// `class PKPushPayload : NSObject`
@available(iOS 8.0, *)
open class PKPushPayload: NSObject {
    private init(standIn: Void) {}
    /// `var type: PKPushType { get }`
    open var type: PKPushType { fatalError("stand-in") }
    /// `var dictionaryPayload: [AnyHashable : Any] { get }`
    open var dictionaryPayload: [AnyHashable: Any] { fatalError("stand-in") }
}

/// `protocol PKPushRegistryDelegate : NSObjectProtocol`
@available(iOS 8.0, *)
public protocol PKPushRegistryDelegate: NSObjectProtocol {
    /// Required: `func pushRegistry(_ registry: PKPushRegistry, didUpdate pushCredentials: PKPushCredentials,
    /// for type: PKPushType)`
    func pushRegistry(_ registry: PKPushRegistry, didUpdate pushCredentials: PKPushCredentials, for type: PKPushType)

    /// `optional func pushRegistry(_ registry: PKPushRegistry, didReceiveIncomingPushWith payload: PKPushPayload,
    /// for type: PKPushType, completion: @escaping @Sendable () -> Void)`
    @available(iOS 11.0, *)
    func pushRegistry(
        _ registry: PKPushRegistry, didReceiveIncomingPushWith payload: PKPushPayload, for type: PKPushType,
        completion: @escaping @Sendable () -> Void
    )

    /// The async form of the same method: `optional func pushRegistry(_ registry: PKPushRegistry,
    /// didReceiveIncomingPushWith payload: PKPushPayload, for type: PKPushType) async`. (Apple's SDK also
    /// has a synchronous method of this name, deprecated since iOS 11; it is left out.)
    @available(iOS 11.0, *)
    func pushRegistry(_ registry: PKPushRegistry, didReceiveIncomingPushWith payload: PKPushPayload, for type: PKPushType) async

    /// `optional func pushRegistry(_ registry: PKPushRegistry, didInvalidatePushTokenFor type: PKPushType)`
    func pushRegistry(_ registry: PKPushRegistry, didInvalidatePushTokenFor type: PKPushType)
}

@available(iOS 8.0, *)
extension PKPushRegistryDelegate {
    public func pushRegistry(
        _ registry: PKPushRegistry, didReceiveIncomingPushWith payload: PKPushPayload, for type: PKPushType,
        completion: @escaping @Sendable () -> Void
    ) {}

    public func pushRegistry(
        _ registry: PKPushRegistry, didReceiveIncomingPushWith payload: PKPushPayload, for type: PKPushType
    ) async {}

    public func pushRegistry(_ registry: PKPushRegistry, didInvalidatePushTokenFor type: PKPushType) {}
}
