import Foundation
import NIOConcurrencyHelpers

/// The one provider token of a signing key, shared by all the connections that use the key.
public final class APNSProviderTokenSource: Sendable {
    public let key: APNSSigningKey
    private let now: @Sendable () -> Date
    private let state: NIOLockedValueBox<APNSProviderTokenPolicy>

    public init(key: APNSSigningKey, refreshAge: TimeInterval = 50 * 60, now: @escaping @Sendable () -> Date = Date.init) {
        self.key = key
        self.now = now
        self.state = NIOLockedValueBox(APNSProviderTokenPolicy(refreshAge: refreshAge))
    }

    /// The token to send now, minting one when the policy says so. Minting happens under the lock,
    /// so concurrent callers never mint two tokens for one refresh.
    public func token() throws -> String {
        try state.withLockedValue { policy in
            let date = now()
            switch policy.decide(now: date) {
            case .use(let value):
                return value
            case .mint:
                let value = try key.providerToken(issuedAt: date)
                policy.minted(value, at: date)
                return value
            }
        }
    }

    public func rejectedAsExpired(_ value: String) {
        state.withLockedValue { $0.rejectedAsExpired(value) }
    }

    /// When the current token was minted, for tests and diagnostics.
    public var issuedAt: Date? { state.withLockedValue { $0.current?.issuedAt } }
}
