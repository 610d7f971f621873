import BeckonJSON
import Foundation

/// A notification of one push type: its headers and its payload.
///
/// Each conforming type fixes its push type and topic suffix, and offers only the fields Apple
/// allows for it, so a wrong header/payload combination (a background push at priority 10, a
/// background push with an alert) does not compile.
public protocol APNSNotification: Sendable {
    /// The `apns-push-type` of every notification of this type.
    static var pushType: APNSPushType { get }
    /// `apns-priority`.
    var priority: APNSPriority { get }
    /// `apns-expiration`.
    var expiration: APNSExpiration { get }
    /// `apns-collapse-id`: at most 64 bytes; a later notification with the same id replaces the displayed one.
    var collapseID: String? { get }
    /// `apns-id`. When nil the client assigns one, so that retries keep the same id.
    var apnsID: UUID? { get }
    /// The `apns-topic` for an app, which Apple derives from the bundle id and the push type.
    func topic(forBundleID bundleID: String) -> String
    /// Writes the JSON body. Size limits are checked by `APNSRequest`, not here.
    func writePayload(to json: inout JSONWriter)
    /// Shortens the payload by at least `bytes` bytes when the type allows it (alert text).
    /// Returns false when nothing more can be shortened.
    mutating func truncate(by bytes: Int) -> Bool
    /// Throws when the notification breaks a payload rule Apple states for its type.
    func validate() throws(APNSPayloadError)
}

extension APNSNotification {
    public func topic(forBundleID bundleID: String) -> String { Self.pushType.topic(forBundleID: bundleID) }
    public mutating func truncate(by bytes: Int) -> Bool { false }
    public func validate() throws(APNSPayloadError) {}

    /// The body APNs would receive, without size checks. Each type writes its own keys by hand:
    /// Apple's key names and the exact byte count that truncation works from (docs/design.md, "JSON").
    public func encodedPayload() -> [UInt8] {
        var json = JSONWriter()
        writePayload(to: &json)
        return json.bytes
    }
}

/// Why a notification cannot be sent as it stands. Checked before any network traffic.
public enum APNSPayloadError: Error, Hashable, Sendable, CustomStringConvertible {
    case tooLarge(size: Int, limit: Int)
    case collapseIDTooLong(bytes: Int)
    case reservedCustomKey(String)
    case nothingToShow
    case missingField(String)
    /// A restored rendering whose priority this push type does not allow.
    case priorityNotAllowed(APNSPushType)

    public var description: String {
        switch self {
        case .tooLarge(let size, let limit):
            "the payload is \(size) bytes; APNs accepts at most \(limit) for this push type"
        case .collapseIDTooLong(let bytes):
            "apns-collapse-id is \(bytes) bytes; APNs accepts at most 64"
        case .reservedCustomKey(let key):
            "custom key \"\(key)\" is reserved; custom keys sit beside \"aps\", not inside or instead of it"
        case .nothingToShow:
            "an alert push needs an alert, a badge or a sound (Apple: alert pushes must interact with the user)"
        case .missingField(let name):
            "this push type requires \(name)"
        case .priorityNotAllowed(let pushType):
            "apns-priority is not allowed for \(pushType.rawValue) pushes (Apple: background pushes use priority 5)"
        }
    }
}

/// Custom top-level keys, peers of `aps` (Apple: "Don't add your own custom keys to the aps dictionary").
func writeCustom(_ custom: [String: JSONValue], to json: inout JSONWriter) {
    for name in custom.keys.sorted() {
        json.key(name)
        json.value(custom[name]!)
    }
}

func validateCustom(_ custom: [String: JSONValue]) throws(APNSPayloadError) {
    if custom["aps"] != nil { throw .reservedCustomKey("aps") }
}
