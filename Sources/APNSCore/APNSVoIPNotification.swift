import BeckonJSON
import Foundation

/// A PushKit VoIP push, to topic `<bundle>.voip`, up to 5120 bytes (apns.md A.3, A.4).
///
/// Apple (apns.md E.6): the app must report it to CallKit at once or iOS terminates it, and
/// repeated failures stop VoIP delivery, so send this only for a real incoming call.
public struct APNSVoIPNotification: APNSNotification, Hashable {
    public static var pushType: APNSPushType { .voip }

    public var custom: [String: JSONValue]
    public var priority: APNSPriority
    public var expiration: APNSExpiration
    public var collapseID: String?
    public var apnsID: UUID?

    /// A ringing call is worthless later, so the default expiration is `.immediately`.
    public init(
        custom: [String: JSONValue] = [:], priority: APNSPriority = .immediately,
        expiration: APNSExpiration = .immediately, collapseID: String? = nil, apnsID: UUID? = nil
    ) {
        self.custom = custom
        self.priority = priority
        self.expiration = expiration
        self.collapseID = collapseID
        self.apnsID = apnsID
    }

    public func validate() throws(APNSPayloadError) { try validateCustom(custom) }

    public func writePayload(to json: inout JSONWriter) {
        json.beginObject()
        json.key("aps"); json.beginObject(); json.endObject()
        writeCustom(custom, to: &json)
        json.endObject()
    }
}
