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

    /// Memory at the peak per byte of one answer: the body, its parse into `JSONValue`, and the
    /// bytes kept to store it. Parsing alone took up to 24.4 times the answer's size (3 MB of
    /// one-key objects; 18 for small numbers, 10 for short strings, 3 for long ones: measured on
    /// Linux with peak RSS, docs/client-sdk.md, "The extension's memory").
    public static let answerFootprint = 28

    /// The most of one answer read from the network: what parses within half the budget
    /// (24 MB: about 440 KB). A larger message is never loaded; the push's own text is shown.
    public var messageBytes: Int { memoryBytes / 2 / Self.answerFootprint }

    /// Memory one answer of at most `messageBytes` may take at its peak.
    public var answerPeakBytes: Int { messageBytes * Self.answerFootprint }

    /// Below this much free memory beside an answer's peak nothing more is loaded: an eighth of
    /// the budget, headroom for what the run allocates besides (the notification, the ledger
    /// write). What the process holds already is not in it: the gauge (`os_proc_available_memory`)
    /// counts that. A quarter, on top of a 6 MB process, leaves room for one answer per push, so a
    /// push naming three messages could show only the newest.
    public var reserveBytes: Int { memoryBytes / 8 }
}
