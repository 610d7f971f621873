/// What the extension hands to iOS's content handler: exactly one of these per push.
public enum NotificationServiceOutcome: Hashable, Sendable {
    /// The message's own text.
    case rewritten(NotificationContent)
    /// The push's own text (its `loc-key`), never blank (docs/design.md, "Small, bounded
    /// extensions").
    case fallback(NotificationContent, FallbackReason)
    /// Nothing shown: only with the filtering entitlement (apns.md E.4), for a message already
    /// read or already notified.
    case suppressed

    public enum FallbackReason: Hashable, Sendable {
        /// Not a Beckon push, or it names no message.
        case notBeckon
        /// The fetch failed (network, 404, credential).
        case fetchFailed
        /// The message is larger than the budget allows to load.
        case tooLarge
        /// Too little memory left to load it.
        case lowMemory
        /// The internal deadline passed.
        case deadline
        /// iOS's own `serviceExtensionTimeWillExpire`.
        case timeWillExpire
        /// The message has no text and the app's renderer gave none.
        case nothingToShow
    }

    /// What to show; nil only when suppressed.
    public var content: NotificationContent? {
        switch self {
        case .rewritten(let content), .fallback(let content, _): content
        case .suppressed: nil
        }
    }
}
