/// `apns-priority` (apns.md A.2). Apple's default, when the header is absent, is 10.
public enum APNSPriority: Int, Hashable, Sendable, CaseIterable {
    /// 10: send immediately.
    case immediately = 10
    /// 5: send based on the device's power considerations.
    case considerPower = 5
    /// 1: prioritise the device's power over everything; never wakes the device.
    case low = 1

    /// The header text, without formatting an integer on every request.
    public var headerValue: String {
        switch self {
        case .immediately: "10"
        case .considerPower: "5"
        case .low: "1"
        }
    }
}
