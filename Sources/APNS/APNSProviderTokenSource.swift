import Foundation
import NIOConcurrencyHelpers

/// The one provider token of a signing key, shared by all the connections that use the key.
public final class APNSProviderTokenSource: Sendable {
    public let key: APNSSigningKey
    private let now: @Sendable () -> Date
    private let state: NIOLockedValueBox<State>

    private struct State {
        var policy: APNSProviderTokenPolicy
        /// `bearer <token>` for the current token, built once per token rather than per request.
        var authorization: (token: String, header: String)?
    }

    public init(key: APNSSigningKey, refreshAge: TimeInterval = 50 * 60, now: @escaping @Sendable () -> Date = Date.init) {
        self.key = key
        self.now = now
        self.state = NIOLockedValueBox(State(policy: APNSProviderTokenPolicy(refreshAge: refreshAge)))
    }

    /// The token to send now, minting one when the policy says so. Minting happens under the lock,
    /// so concurrent callers never mint two tokens for one refresh.
    public func token() throws -> String {
        try state.withLockedValue { state in try Self.token(&state.policy, key: key, now: now()) }
    }

    /// The token to send now and its `authorization` header value, `bearer <token>`.
    func authorization() throws -> (token: String, header: String) {
        try state.withLockedValue { state in
            let token = try Self.token(&state.policy, key: key, now: now())
            if let cached = state.authorization, cached.token == token { return cached }
            let authorization = (token: token, header: "bearer " + token)
            state.authorization = authorization
            return authorization
        }
    }

    private static func token(_ policy: inout APNSProviderTokenPolicy, key: APNSSigningKey, now date: Date) throws -> String {
        switch policy.decide(now: date) {
        case .use(let value):
            return value
        case .mint:
            let value = try key.providerToken(issuedAt: date)
            policy.minted(value, at: date)
            return value
        }
    }

    public func rejectedAsExpired(_ value: String) {
        state.withLockedValue { $0.policy.rejectedAsExpired(value) }
    }

    /// When the current token was minted, for tests and diagnostics.
    public var issuedAt: Date? { state.withLockedValue { $0.policy.current?.issuedAt } }
}
