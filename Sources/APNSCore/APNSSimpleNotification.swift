import BeckonJSON
import Foundation

/// The push types whose payload is an (often empty) `aps` plus custom keys, told apart only by
/// their push type and topic suffix: location, complication, push-to-talk, controls.
public struct APNSSimpleNotification<Kind: APNSSimpleKind>: APNSNotification, Hashable {
    public static var pushType: APNSPushType { Kind.pushType }

    public var custom: [String: JSONValue]
    public var priority: APNSPriority
    public var expiration: APNSExpiration
    public var collapseID: String?
    public var apnsID: UUID?

    public init(
        custom: [String: JSONValue] = [:], priority: APNSPriority = .immediately,
        expiration: APNSExpiration = .default, collapseID: String? = nil, apnsID: UUID? = nil
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

/// Marks which push type an `APNSSimpleNotification` is.
public protocol APNSSimpleKind: Sendable, Hashable { static var pushType: APNSPushType { get } }

public enum LocationKind: APNSSimpleKind { public static var pushType: APNSPushType { .location } }
public enum ComplicationKind: APNSSimpleKind { public static var pushType: APNSPushType { .complication } }
public enum PushToTalkKind: APNSSimpleKind { public static var pushType: APNSPushType { .pushtotalk } }
public enum ControlsKind: APNSSimpleKind { public static var pushType: APNSPushType { .controls } }

/// Wakes the Location Push Service Extension; token authentication only (apns.md A.3).
public typealias APNSLocationNotification = APNSSimpleNotification<LocationKind>
/// Updates a watch complication through PushKit.
public typealias APNSComplicationNotification = APNSSimpleNotification<ComplicationKind>
/// A PushToTalk framework push.
public typealias APNSPushToTalkNotification = APNSSimpleNotification<PushToTalkKind>
/// Reloads a WidgetKit control.
public typealias APNSControlsNotification = APNSSimpleNotification<ControlsKind>
