import APNSCore

/// After each attempt at one notification: answer the caller, try again, or give up.
///
/// A pure value type, so Apple's retry rules (apns.md A.8) are tested without sockets or clocks:
/// - 5xx and 429 are retried with backoff; never-retry reasons are answered at once.
/// - `ExpiredProviderToken`: retried on fresh connections once the token may be replaced (B.3).
/// - Streams APNs never processed (GOAWAY above their id, REFUSED_STREAM) are resent at once and
///   do not use up an attempt; after a few such resends they back off too, so a server that keeps
///   refusing cannot turn this into a busy loop.
/// - A connection that died with the stream open may or may not have delivered it: that uses an attempt.
/// - Nothing waits past the notification's deadline, and no attempt starts in its last `reserve`
///   seconds: an answer cut off by the deadline leaves the caller a request APNs may have
///   delivered, which it can only send again (a duplicate) or drop (apns.md G.19); an attempt
///   not made is a plain "not sent".
struct APNSRetryStateMachine: Sendable {
    enum Outcome: Sendable {
        case answered(APNSResponse)
        case connectionError(APNSConnectionError)
        case poolFailure(APNSPoolFailure)
    }

    enum Decision: Equatable, Sendable {
        case deliver(APNSResponse)
        /// Send again after `delay` seconds; `refreshToken` when the provider token was refused as stale.
        case retry(delay: Double, refreshToken: Bool)
        case fail(APNSClientError)
    }

    let policy: APNSRetryPolicy
    /// Seconds before the deadline in which no attempt starts.
    let reserve: Double
    /// Attempts that counted (the first included).
    private(set) var attempts = 1
    private var freeResends = 0

    init(policy: APNSRetryPolicy, reserve: Double = 0) {
        self.policy = policy
        self.reserve = reserve
    }

    /// The share of a send's deadline kept free of new attempts: an answer takes milliseconds,
    /// but seconds on a saturated host (1.9 s can be too little).
    static let reservedShareOfDeadline = 0.1

    /// `remaining` is the time left before the deadline; `random` in 0...1 draws the jitter. It is
    /// evaluated only for a backoff, not for the answers that end nearly every notification (a
    /// draw from the system generator is a system call on Linux).
    mutating func next(after outcome: Outcome, remaining: Double, random: @autoclosure () -> Double) -> Decision {
        let decision = decide(outcome, random: random)
        guard case .retry(let delay, _) = decision else { return decision }
        guard remaining > delay + reserve else { return .fail(.deadlineExceeded(attempts: attempts)) }
        return decision
    }

    private mutating func decide(_ outcome: Outcome, random: () -> Double) -> Decision {
        switch outcome {
        case .answered(let response):
            let canRetry = attempts < policy.maximumAttempts
            switch response.retryClass {
            case .retryWithDelay where canRetry:
                let delay = policy.delay(afterAttempts: attempts, random: random()) ?? 0
                attempts += 1
                return .retry(delay: delay, refreshToken: false)
            case .refreshTokenAndRetry where canRetry:
                attempts += 1
                return .retry(delay: 0, refreshToken: true)
            default:
                return .deliver(response)
            }
        case .poolFailure(.queueFull):
            return .fail(.overloaded)
        case .poolFailure(.shutDown):
            return .fail(.shutDown)
        case .connectionError(.deadlineExceeded):
            return .fail(.deadlineExceeded(attempts: attempts))
        case .connectionError(let error) where error.wasNotProcessed:
            freeResends += 1
            let delay = freeResends <= 3 ? 0 : policy.backoff.delay(attempt: freeResends - 3, random: random())
            return .retry(delay: delay, refreshToken: false)
        case .connectionError(let error):
            guard let delay = policy.delay(afterAttempts: attempts, random: random()) else {
                return .fail(.connectionFailed(attempts: attempts, lastError: error))
            }
            attempts += 1
            return .retry(delay: delay, refreshToken: false)
        }
    }
}
