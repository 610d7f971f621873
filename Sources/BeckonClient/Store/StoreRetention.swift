/// How long the device's store keeps what it has. The store is a delivery buffer that also serves
/// the app's recent history: messages stay `messageAge` after they arrived, at most the newest
/// `maximumMessages`; what only guards against showing a notification twice (the ledger)
/// or ringing a call that ended stays `recordAge`, longer than any push about them can arrive
/// (an alert lives a day, `alertTimeToLive`; a re-push a few minutes more).
///
/// Beyond `maximumMessages` the oldest go, read ones first. Otherwise never pruned: an unread
/// message younger than `messageAge` (the user has not seen it), a read marker not yet sent to
/// the server, a message the extension fetched that sync has not delivered yet (for
/// `messageAge`), and the cursor.
public struct StoreRetention: Hashable, Sendable {
    /// Default 30 days.
    public var messageAge: Duration
    /// Default 5,000: a bound however chatty the month.
    public var maximumMessages: Int
    /// Default 7 days.
    public var recordAge: Duration
    /// The store prunes itself at most this often (`BeckonApp` calls `pruneIfDue` after a sync).
    /// Default one day.
    public var interval: Duration

    /// The defaults: 30 days, 5,000 messages, a week of notification and call records, daily.
    public init(
        messageAge: Duration = .seconds(30 * 86_400), maximumMessages: Int = 5_000, recordAge: Duration = .seconds(7 * 86_400),
        interval: Duration = .seconds(86_400)
    ) {
        self.messageAge = messageAge
        self.maximumMessages = maximumMessages
        self.recordAge = recordAge
        self.interval = interval
    }
}

/// What one pruning removed.
public struct PruneOutcome: Hashable, Sendable {
    public var messages = 0
    public var ledgerEntries = 0
    public var calls = 0

    public init(messages: Int = 0, ledgerEntries: Int = 0, calls: Int = 0) {
        self.messages = messages
        self.ledgerEntries = ledgerEntries
        self.calls = calls
    }
}
