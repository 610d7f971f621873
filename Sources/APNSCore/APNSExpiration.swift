import Foundation

/// `apns-expiration` (apns.md A.2, E.1): how long APNs may store a notification for an offline device.
public enum APNSExpiration: Hashable, Sendable {
    /// No header: APNs stores the notification under its own policy (at most 30 days).
    case `default`
    /// `0`: one delivery attempt, never stored. Right for pushes that are useless later (a ringing call).
    case immediately
    /// Store and retry until this moment (best effort).
    case at(Date)

    /// The header value, or nil when the header is omitted.
    public var headerValue: String? {
        switch self {
        case .default: nil
        case .immediately: "0"
        case .at(let date): String(Int(date.timeIntervalSince1970.rounded(.down)))
        }
    }

    /// Parses a header value as Apple defines it: UNIX epoch seconds, `0` meaning immediately.
    public init?(headerValue: String) {
        guard let seconds = Int(headerValue), seconds >= 0 else { return nil }
        self = seconds == 0 ? .immediately : .at(Date(timeIntervalSince1970: TimeInterval(seconds)))
    }
}
