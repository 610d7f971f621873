import APNSCore
import Foundation

/// The notification a planned push carries, as a typed APNSCore value, so a wrong header/payload
/// combination (a background push at priority 10, a background push with an alert) cannot be
/// built (rule 2). Codable through `NotificationWire` because the push outbox stores it.
public enum PlannedNotification: Hashable, Sendable {
    case alert(APNSAlertNotification)
    case background(APNSBackgroundNotification)
    case voip(APNSVoIPNotification)

    /// The request APNs receives: headers, topic and the (possibly truncated) body.
    public func request(to token: APNSDeviceToken, bundleID: String) throws(APNSPayloadError) -> APNSRequest {
        switch self {
        case .alert(let notification): try APNSRequest(notification, to: token, bundleID: bundleID)
        case .background(let notification): try APNSRequest(notification, to: token, bundleID: bundleID)
        case .voip(let notification): try APNSRequest(notification, to: token, bundleID: bundleID)
        }
    }

    /// The body without size checks or truncation.
    public func encodedPayload() -> [UInt8] {
        switch self {
        case .alert(let notification): notification.encodedPayload()
        case .background(let notification): notification.encodedPayload()
        case .voip(let notification): notification.encodedPayload()
        }
    }

    public var pushType: APNSPushType {
        switch self {
        case .alert: .alert
        case .background: .background
        case .voip: .voip
        }
    }

    public var priority: APNSPriority {
        switch self {
        case .alert(let notification): notification.priority
        case .background(let notification): notification.priority
        case .voip(let notification): notification.priority
        }
    }

    public var expiration: APNSExpiration {
        switch self {
        case .alert(let notification): notification.expiration
        case .background(let notification): notification.expiration
        case .voip(let notification): notification.expiration
        }
    }

    public var collapseID: String? {
        switch self {
        case .alert(let notification): notification.collapseID
        case .background(let notification): notification.collapseID
        case .voip(let notification): notification.collapseID
        }
    }

    /// The top-level custom keys (Beckon's own under `PayloadKey.beckon`).
    public var custom: [String: APNSJSON] {
        switch self {
        case .alert(let notification): notification.custom
        case .background(let notification): notification.custom
        case .voip(let notification): notification.custom
        }
    }
}

extension PlannedNotification: Codable {
    public init(from decoder: any Decoder) throws {
        self = try NotificationWire(from: decoder).notification()
    }

    public func encode(to encoder: any Encoder) throws {
        try NotificationWire(self).encode(to: encoder)
    }
}
