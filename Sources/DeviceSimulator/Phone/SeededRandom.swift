import BeckonClient

/// The simulator's seeded choices (iOS's budget draws, a fleet's assignments): the same seed
/// replays the same run. The generator is the SDK's `JitterSource` (SplitMix64).
public struct SeededRandom: Hashable, Sendable {
    private var source: JitterSource

    public init(seed: UInt64) { source = JitterSource(seed: seed) }

    /// A number in 0..<1.
    public mutating func unit() -> Double { source.next() }

    /// A number in 0..<bound.
    public mutating func below(_ bound: Int) -> Int { Int(source.nextBits() % UInt64(max(bound, 1))) }

    public mutating func shuffled<Element>(_ items: [Element]) -> [Element] {
        var items = items
        for index in stride(from: items.count - 1, to: 0, by: -1) { items.swapAt(index, below(index + 1)) }
        return items
    }
}
