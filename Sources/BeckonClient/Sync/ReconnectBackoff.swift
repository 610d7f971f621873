/// How long to wait before connecting again: exponential from `base` to `maximum`, with
/// "equal jitter" (half fixed, half random) so a server restart does not bring every device
/// back in the same instant. The randomness is an input: the state machine stays pure.
public struct ReconnectBackoff: Hashable, Sendable {
    public var base: Duration
    public var maximum: Duration

    public init(base: Duration = .milliseconds(500), maximum: Duration = .seconds(60)) {
        self.base = base
        self.maximum = maximum
    }

    /// The wait before attempt `attempt` (1 = the first retry); `unit` is uniform in [0, 1).
    public func delay(attempt: Int, unit: Double) -> Duration {
        let exponent = min(max(attempt - 1, 0), 30)
        let cap = min(base * (1 << exponent), maximum)
        return cap / 2 + cap / 2 * min(max(unit, 0), 1)
    }
}

/// A small deterministic generator (SplitMix64) for the jitter: seeded from the system in the
/// app, fixed in tests.
public struct JitterSource: Hashable, Sendable {
    private var state: UInt64

    public init(seed: UInt64) { state = seed }

    public init() { state = UInt64.random(in: .min ... .max) }

    /// Uniform in [0, 1).
    public mutating func next() -> Double {
        Double(nextBits() >> 11) / Double(1 << 53)
    }

    /// The next 64 random bits.
    public mutating func nextBits() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
