/// Which process of the app holds a sync session. A device has at most one session per role;
/// the app's session preempts the extension's (close 4002), never the reverse — the main app
/// has priority over its notification service extension (docs/design.md, "Sync roles").
public enum SyncRole: String, Hashable, Sendable, Codable, CaseIterable {
    /// The main app, in the foreground or in its background time.
    case app
    /// The notification service extension (or another extension) syncing what a push named.
    case `extension`
}
