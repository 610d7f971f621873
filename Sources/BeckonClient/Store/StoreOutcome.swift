/// What storing a synced message found.
public struct StoreOutcome: Hashable, Sendable {
    /// Not stored before, by sync or by the extension.
    public var isNew: Bool
    /// Read, here or elsewhere.
    public var isRead: Bool
}
