import BeckonProtocol
import Foundation

/// How both stores check, normalize and date a device's tokens, so that a device registered
/// through one store reads the same as through the other.
enum PushTokens {
    /// The registration's ids checked and its tokens normalized.
    static func checked(_ registration: DeviceRegistration) throws -> (push: String?, voip: String?) {
        let pushToken = try registration.pushToken.map { try normalized($0, field: "pushToken") }
        let voipToken = try registration.voipToken.map { try normalized($0, field: "voipToken") }
        guard !registration.deviceID.isEmpty else {
            throw BeckonStoreError.invalidArgument(field: "deviceID", reason: "must not be empty")
        }
        guard !registration.userID.isEmpty else {
            throw BeckonStoreError.invalidArgument(field: "userID", reason: "must not be empty")
        }
        return (pushToken, voipToken)
    }

    /// When the push token counts as registered: the caller's earlier time (a drop-in pusher set
    /// before Beckon saw it), else now; never later than now, so a future time cannot outlive one
    /// of APNs' 410s (rule 8).
    static func registeredAt(_ registration: DeviceRegistration, now: Int64) -> Int64 {
        // Compared as a double first: a caller's absurd time must not trap in Int64's conversion.
        guard let milliseconds = registration.pushTokenRegisteredAt.map({ $0.timeIntervalSince1970 * 1000 }),
            milliseconds < Double(now)
        else { return now }
        return milliseconds <= 0 ? 0 : Int64(milliseconds.rounded(.down))
    }

    /// The `device` table's column that holds a token of this kind.
    static func column(_ kind: PushTokenKind) -> String {
        switch kind {
        case .remote: "push_token"
        case .voip: "voip_token"
        }
    }

    /// Lowercase hex, so a token matches whatever case the app or APNs wrote it in. APNs tokens
    /// are 32 bytes today but Apple documents them as variable length: only the form is checked.
    static func normalized(_ token: String, field: String) throws -> String {
        let lower = token.lowercased()
        guard !lower.isEmpty, lower.utf8.count % 2 == 0, lower.utf8.count <= 400,
              lower.utf8.allSatisfy({ (48...57).contains($0) || (97...102).contains($0) })
        else { throw BeckonStoreError.invalidArgument(field: field, reason: "must be an even number of hex digits") }
        return lower
    }
}
