import Foundation

/// When to mint a new provider token: a pure state machine, so the timing rules are tested on an
/// injected clock.
///
/// Apple (apns.md B.1): "Refresh your token no more than once every 20 minutes and no less than
/// once every 60 minutes"; a new token more often than every 20 minutes on a connection is
/// answered 429 `TooManyProviderTokenUpdates`. So: one token per (team, key) shared by every
/// connection, refreshed once it is `refreshAge` old, and never replaced sooner than 20 minutes
/// after it was minted — not even after `ExpiredProviderToken`, which only marks it for replacement
/// at the earliest moment the spacing allows.
public struct APNSProviderTokenPolicy: Sendable, Equatable {
    public static let minimumSpacing: TimeInterval = 20 * 60
    public static let maximumAge: TimeInterval = 60 * 60

    public struct Token: Sendable, Equatable {
        public var value: String
        public var issuedAt: Date
    }

    public enum Decision: Equatable, Sendable {
        case use(String)
        case mint
    }

    public let refreshAge: TimeInterval
    public private(set) var current: Token?
    private var markedStale = false

    /// `refreshAge` is clamped to Apple's 20–60 minute window, with a minute's margin at the top.
    public init(refreshAge: TimeInterval = 50 * 60) {
        self.refreshAge = min(max(refreshAge, Self.minimumSpacing), Self.maximumAge - 60)
    }

    public func decide(now: Date) -> Decision {
        guard let current else { return .mint }
        let age = now.timeIntervalSince(current.issuedAt)
        // A clock that went backwards would otherwise keep a token forever.
        if age < 0 { return age < -Self.minimumSpacing ? .mint : .use(current.value) }
        if age >= refreshAge { return .mint }
        if markedStale && age >= Self.minimumSpacing { return .mint }
        return .use(current.value)
    }

    public mutating func minted(_ value: String, at date: Date) {
        current = Token(value: value, issuedAt: date)
        markedStale = false
    }

    /// APNs answered `ExpiredProviderToken` to a request that carried `value`.
    public mutating func rejectedAsExpired(_ value: String) {
        if current?.value == value { markedStale = true }
    }
}
