import BeckonJSON
import Foundation

/// What APNs answered to one request (apns.md A.5–A.7).
public struct APNSResponse: Sendable, Hashable {
    public var status: Int
    /// `apns-id`: the request's id echoed, or the one APNs made up.
    public var apnsID: UUID?
    /// `apns-unique-id`: sandbox only; looks the push up in Apple's delivery log.
    public var uniqueID: UUID?
    public var reason: APNSReason?
    /// For 410: when APNs last knew the token was valid. Compare it with the token's registration
    /// time before deleting the token (apns.md G.10).
    public var timestamp: Date?

    public init(status: Int, apnsID: UUID? = nil, uniqueID: UUID? = nil, reason: APNSReason? = nil, timestamp: Date? = nil) {
        self.status = status
        self.apnsID = apnsID
        self.uniqueID = uniqueID
        self.reason = reason
        self.timestamp = timestamp
    }

    public var isSuccess: Bool { status == 200 }

    /// How to treat this answer. Statuses without a known reason fall back to the status class.
    public var retryClass: APNSRetryClass {
        if isSuccess { return .never }
        if let reason, reason.status != nil { return reason.retryClass }
        switch status {
        case 429, 500...599: return .retryWithDelay
        case 410: return .never
        default: return .fixFirst
        }
    }

    /// Reads `{"reason": "...", "timestamp": <ms>}` from an error body; tolerant of extra keys.
    public static func parseErrorBody(_ body: [UInt8]) -> (reason: APNSReason?, timestamp: Date?) {
        guard !body.isEmpty, case .object(let object)? = try? JSONParser.parse(body) else { return (nil, nil) }
        let milliseconds: Double? = switch object["timestamp"] {
        case .int(let value)?: Double(value)
        case .double(let value)?: value
        default: nil
        }
        let timestamp = milliseconds.map { Date(timeIntervalSince1970: $0 / 1000) }
        return (object["reason"]?.stringValue.map(APNSReason.init(rawValue:)), timestamp)
    }
}
