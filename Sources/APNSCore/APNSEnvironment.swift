/// Which APNs service a token belongs to (apns.md A.1). A sandbox token sent to production,
/// or the reverse, is answered with `BadDeviceToken` (apns.md G.1).
public enum APNSEnvironment: String, Hashable, Sendable, CaseIterable {
    case sandbox
    case production

    public var host: String {
        switch self {
        case .sandbox: "api.sandbox.push.apple.com"
        case .production: "api.push.apple.com"
        }
    }

    /// Apple also listens on 2197 for networks that block other HTTPS traffic.
    public static let port = 443

    public var other: APNSEnvironment { self == .sandbox ? .production : .sandbox }
}
