/// A small, fast, seedable generator (SplitMix64): the same seed replays the same run, in
/// iOS's budget draws and in a fleet's choices.
public struct SeededRandom: Hashable, Sendable {
    private var state: UInt64

    public init(seed: UInt64) { state = seed }

    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    /// A number in 0..<bound.
    public mutating func below(_ bound: Int) -> Int { Int(next() % UInt64(max(bound, 1))) }

    /// A number in 0..<1.
    public mutating func unit() -> Double { Double(next() >> 11) / Double(1 << 53) }

    public mutating func shuffled<Element>(_ items: [Element]) -> [Element] {
        var items = items
        for index in stride(from: items.count - 1, to: 0, by: -1) { items.swapAt(index, below(index + 1)) }
        return items
    }
}
