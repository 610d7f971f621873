/// What a notification service extension may spend: iOS gives it about 30 s and kills it at
/// about 24 MB (apns.md E.4). Both are part of the API so they cannot be forgotten
/// (docs/design.md, "Small, bounded extensions").
public struct ExtensionBudget: Hashable, Sendable {
    /// The memory the extension may use in all. 24 MB by default; 12 MB on old iOS versions.
    public var memoryBytes: Int
    /// When the best content so far is delivered at the latest: below iOS's 30 s, as Monal and
    /// Linphone do at 25 s.
    public var deadline: Duration
    /// The most names of one push fetched (the newest first).
    public var maximumFetches: Int

    public init(memoryBytes: Int = 24 << 20, deadline: Duration = .seconds(25), maximumFetches: Int = 3) {
        self.memoryBytes = memoryBytes
        self.deadline = deadline
        self.maximumFetches = maximumFetches
    }

    /// The most of one answer read from the network: an eighth of the budget. A larger message
    /// is never loaded; the push's own text is shown instead.
    public var messageBytes: Int { memoryBytes / 8 }

    /// Below this much free memory nothing more is loaded (a quarter of the budget, for the
    /// answer, its parse, and the rest of the process).
    public var reserveBytes: Int { memoryBytes / 4 }
}
