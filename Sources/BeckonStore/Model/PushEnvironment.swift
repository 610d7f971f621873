/// The APNs environment a token belongs to: a development build's token is valid only in the
/// sandbox, a TestFlight or App Store build's only in production (docs/apns.md E.7).
public enum PushEnvironment: String, Hashable, Sendable, Codable, CaseIterable {
    case sandbox
    case production
}
