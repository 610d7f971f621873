/// iOS's allowance of background launches: a bucket that refills evenly (`perHour`) up to
/// `burst`, and a seeded draw that declines some pushes even within it (apns.md E.3: "doesn't
/// guarantee their delivery"). Deterministic: the same seed gives the same run.
struct BackgroundBudget: Hashable, Sendable {
    let perHour: Double
    let burst: Double
    let dropRate: Double
    private(set) var tokens: Double
    private(set) var updatedAt: Double
    private var random: SeededRandom

    init(perHour: Double, burst: Double, dropRate: Double, seed: UInt64) {
        self.perHour = perHour
        self.burst = max(1, burst)
        self.dropRate = dropRate
        self.tokens = max(1, burst)
        self.updatedAt = 0
        self.random = SeededRandom(seed: seed)
    }

    private mutating func refill(now: Double) {
        guard now > updatedAt else { return }
        tokens = min(burst, tokens + (now - updatedAt) * perHour / 3600)
        updatedAt = now
    }

    /// Whether a launch fits the budget now.
    mutating func hasRoom(now: Double) -> Bool {
        refill(now: now)
        return tokens >= 1
    }

    /// Spends one launch.
    mutating func spend(now: Double) {
        refill(now: now)
        tokens -= 1
    }

    /// When a launch fits again (nil: never, with no refill).
    mutating func nextRoom(now: Double) -> Double? {
        refill(now: now)
        if tokens >= 1 { return now }
        guard perHour > 0 else { return nil }
        return now + (1 - tokens) * 3600 / perHour
    }

    /// The seeded draw: true when iOS declines this push although the budget has room.
    mutating func declines() -> Bool {
        guard dropRate > 0 else { return false }
        return random.unit() < dropRate
    }
}
