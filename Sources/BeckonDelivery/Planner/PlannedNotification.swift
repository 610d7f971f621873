import BeckonJSON
import APNSCore
import BeckonProtocol
import Foundation

/// The notification a planned push carries, as a typed APNSCore value, so a wrong header/payload
/// combination (a background push at priority 10, a background push with an alert) cannot be
/// built (rule 2). The push outbox stores it rendered (`APNSRenderedNotification`).
public enum PlannedNotification: Hashable, Sendable {
    case alert(APNSAlertNotification)
    case background(APNSBackgroundNotification)
    case voip(APNSVoIPNotification)

    /// What APNs receives, but the token: headers, topic and the (possibly truncated) body.
    public func rendered(bundleID: String) throws(APNSPayloadError) -> APNSRenderedNotification {
        switch self {
        case .alert(let notification): try APNSRenderedNotification(notification, bundleID: bundleID)
        case .background(let notification): try APNSRenderedNotification(notification, bundleID: bundleID)
        case .voip(let notification): try APNSRenderedNotification(notification, bundleID: bundleID)
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

    /// The top-level custom keys (Beckon's own under `BeckonPushPayload.key`).
    public var custom: [String: JSONValue] {
        switch self {
        case .alert(let notification): notification.custom
        case .background(let notification): notification.custom
        case .voip(let notification): notification.custom
        }
    }
}
