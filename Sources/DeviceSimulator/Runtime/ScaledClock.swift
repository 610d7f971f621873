import BeckonClient
import Foundation

/// Virtual time that runs `scale` times faster than the wall clock, shared by every simulated
/// device and the SDK inside them, while the server runs its windows divided by the same scale:
/// a scenario's minutes take seconds (docs/simulator.md, "Scaled time").
public struct ScaledClock: ClientClock {
    public let scale: Double
    /// The virtual moment the run started.
    public let origin: Date
    private let realStart: Date

    public init(scale: Double, origin: Date = Date()) {
        self.scale = max(1, scale)
        self.origin = origin
        self.realStart = Date()
    }

    /// Virtual seconds since the run started.
    public var elapsed: Double { Date().timeIntervalSince(realStart) * scale }

    public func now() -> Date { origin.addingTimeInterval(elapsed) }

    public func sleep(for duration: Duration) async throws {
        try await Task.sleep(for: duration / scale)
    }

    /// Sleeps until `elapsed` reaches `moment`.
    public func sleep(untilElapsed moment: Double) async throws {
        let gap = moment - elapsed
        if gap > 0 { try await Task.sleep(for: .seconds(gap / scale)) }
    }

    /// A virtual duration as wall-clock time (what the SDK's lease timings are kept in).
    public func virtual(_ real: Duration) -> Duration { real * scale }
}
