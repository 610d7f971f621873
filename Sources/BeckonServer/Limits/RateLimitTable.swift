import Foundation

/// Token buckets keyed by who is limited (an app, a user, a device), as a value with pure
/// transitions: the clock is an argument, so tests step time by hand.
///
/// A bucket holds up to `burst` tokens and refills at `rate` tokens a second; each request takes
/// one. Memory is bounded: at most `capacity` keys are kept, and when the table is full the
/// buckets that have refilled completely (indistinguishable from new ones) are dropped first,
/// then the least recently used.
struct RateLimitTable: Sendable {
    let rate: Double
    let burst: Double
    let capacity: Int
    private var buckets: [String: Bucket] = [:]

    private struct Bucket: Sendable {
        var tokens: Double
        var updated: Date
    }

    /// What a request gets: let through, or refused with the wait until a token is back.
    enum Decision: Equatable, Sendable {
        case allowed
        case limited(retryAfter: TimeInterval)
    }

    init(rate: Double, burst: Double, capacity: Int = 100_000) {
        precondition(rate > 0 && burst >= 1 && capacity > 0)
        self.rate = rate
        self.burst = burst
        self.capacity = capacity
    }

    var count: Int { buckets.count }

    /// - Parameter share: how many nodes share the limit (docs/cluster.md, "Limits"): this one
    ///   allows `1/share` of the rate and of the burst (at least one request), so together they
    ///   stay within it.
    mutating func take(_ key: String, now: Date, share: Int = 1) -> Decision {
        let rate = self.rate / Double(max(1, share)), burst = max(1, (self.burst / Double(max(1, share))).rounded(.down))
        var bucket = buckets[key] ?? Bucket(tokens: burst, updated: now)
        let elapsed = max(0, now.timeIntervalSince(bucket.updated))
        bucket.tokens = min(burst, bucket.tokens + elapsed * rate)
        bucket.updated = now
        guard bucket.tokens >= 1 else {
            buckets[key] = bucket
            return .limited(retryAfter: (1 - bucket.tokens) / rate)
        }
        bucket.tokens -= 1
        if buckets[key] == nil && buckets.count >= capacity { evict(now: now) }
        buckets[key] = bucket
        return .allowed
    }

    private mutating func evict(now: Date) {
        let refillTime = burst / rate
        buckets = buckets.filter { now.timeIntervalSince($0.value.updated) < refillTime }
        if buckets.count >= capacity, let oldest = buckets.min(by: { $0.value.updated < $1.value.updated }) {
            buckets[oldest.key] = nil
        }
    }
}
