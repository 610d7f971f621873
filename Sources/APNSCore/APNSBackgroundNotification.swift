import BeckonJSON
import Foundation

/// A background (silent) push: wakes the app for up to 30 seconds, shows nothing.
///
/// Apple (apns.md E.3, D.4): priority is always 5 ("using priority 10 is an error"), and `aps`
/// holds only `content-available: 1` — so neither can be set here. Apple throttles these to
/// "two or three per hour" and keeps only the newest held one; never rely on a single one.
public struct APNSBackgroundNotification: APNSNotification, Hashable {
    public static var pushType: APNSPushType { .background }

    public var custom: [String: JSONValue]
    public var expiration: APNSExpiration
    public var collapseID: String?
    public var apnsID: UUID?

    public var priority: APNSPriority { .considerPower }

    public init(
        custom: [String: JSONValue] = [:], expiration: APNSExpiration = .default,
        collapseID: String? = nil, apnsID: UUID? = nil
    ) {
        self.custom = custom
        self.expiration = expiration
        self.collapseID = collapseID
        self.apnsID = apnsID
    }

    public func validate() throws(APNSPayloadError) { try validateCustom(custom) }

    public func writePayload(to json: inout JSONWriter) {
        json.beginObject()
        json.key("aps")
        json.beginObject()
        json.key("content-available"); json.int(1)
        json.endObject()
        writeCustom(custom, to: &json)
        json.endObject()
    }
}
