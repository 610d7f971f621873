import BeckonProtocol
import Foundation
import Metrics
import NIOConcurrencyHelpers

/// One of the API's rate limits (`limits.*-per-*`), shared by every request handler: a
/// `RateLimitTable` behind a lock, answering 429 with `Retry-After` when a key is over its rate.
final class RateLimiter: Sendable {
    /// The configuration key without `limits.`; names the limit in errors and in
    /// `beckon_rate_limited_total{limit=…}`.
    let name: String
    /// What is limited: "app", "user", "device".
    let scope: String
    private let table: NIOLockedValueBox<RateLimitTable>
    private let limited: Counter
    /// The nodes sharing the limit (several nodes on one database); nil for one node.
    private let share: NodeShare?

    /// - Parameters:
    ///   - perSecond: the sustained rate per key.
    ///   - burst: how many requests a key may make at once after being quiet.
    ///   - share: the nodes that share the limit: each allows its part.
    init(name: String, scope: String, perSecond: Double, burst: Double, share: NodeShare? = nil) {
        self.share = share
        self.name = name
        self.scope = scope
        self.table = NIOLockedValueBox(RateLimitTable(rate: perSecond, burst: burst))
        self.limited = Counter(label: "beckon_rate_limited_total", dimensions: [("limit", name)])
    }

    /// Takes one request for `key`, or throws 429 `rate_limited`.
    func take(_ key: String, now: Date) throws(APIError) {
        let nodes = share?.count ?? 1
        let decision = table.withLockedValue { $0.take(key, now: now, share: nodes) }
        guard case .limited(let wait) = decision else { return }
        limited.increment()
        let seconds = max(1, Int(wait.rounded(.up)))
        var error = APIError(
            status: .tooManyRequests, code: .rateLimited,
            message: "too many requests for this \(scope) (limits.\(name)\(nodes > 1 ? ", shared by \(nodes) nodes" : "")); retry in \(seconds) s")
        error.headers[.retryAfter] = String(seconds)  // RFC 9110 §10.2.3: seconds to wait.
        throw error
    }
}
