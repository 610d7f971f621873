/// Puts horizontal extents (in pixels) on the first sub-row where they do not overlap what is
/// already there, so bars and labels that share a moment are stacked instead of drawn over each
/// other. Past `limit` sub-rows, the one that frees up first takes the overflow.
struct RowPacker {
    private(set) var ends: [Double] = []
    let gap: Double
    let limit: Int

    init(gap: Double = 4, limit: Int = 64) {
        self.gap = gap
        self.limit = max(limit, 1)
    }

    /// Sub-rows used so far (at least one, so an empty row still has a height).
    var count: Int { max(ends.count, 1) }

    /// The sub-row for an extent; feed extents in order of their start for a tight packing.
    mutating func place(from start: Double, to end: Double) -> Int {
        if let free = ends.firstIndex(where: { $0 + gap <= start }) {
            ends[free] = end
            return free
        }
        if ends.count < limit {
            ends.append(end)
            return ends.count - 1
        }
        // Every sub-row is taken: overlap where it overlaps least.
        let least = ends.indices.min { ends[$0] < ends[$1] }!
        ends[least] = max(ends[least], end)
        return least
    }
}
