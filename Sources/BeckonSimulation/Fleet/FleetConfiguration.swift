import BeckonProtocol

/// A fleet run: how many phones, how they are used, the app's strategy, how many messages.
public struct FleetConfiguration: Sendable {
    public var devices: Int
    public var mix: FleetMix
    public var strategy: DeliveryStrategy
    /// Messages posted, each to one user (one phone), at seeded times in the first 60% of the run.
    public var messages: Int
    /// Virtual seconds.
    public var duration: Double
    public var timeScale: Double
    public var seed: UInt64
    /// iOS reclaims a suspended app after this many virtual seconds (`IOSPolicy.suspendedLifetimeSeconds`).
    public var reclaimAfter: Double
    /// Registrations and posts in flight at once.
    public var concurrency: Int

    public init(
        devices: Int, mix: FleetMix = .standard, strategy: DeliveryStrategy = .wake, messages: Int? = nil,
        duration: Double = 900, timeScale: Double = 10, seed: UInt64 = 1, reclaimAfter: Double = 120, concurrency: Int = 16
    ) {
        self.devices = devices
        self.mix = mix
        self.strategy = strategy
        self.messages = messages ?? devices
        self.duration = duration
        self.timeScale = timeScale
        self.seed = seed
        self.reclaimAfter = reclaimAfter
        self.concurrency = concurrency
    }
}
