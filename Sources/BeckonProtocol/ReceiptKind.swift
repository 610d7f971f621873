/// What a device reports happened to a message on the phone (docs/sync-protocol.md, "Receipts"):
/// the trace's and the webhooks' view of the last mile, which APNs' answer does not cover.
public enum ReceiptKind: String, Hashable, Sendable, Codable, CaseIterable {
    /// The app has the message: its sync session acknowledged it, or its extension fetched it.
    case synced
    /// A notification for it was on screen: presented by the extension or the app.
    case shown
    /// The user tapped its notification.
    case opened
    /// Its notification left the screen: taken away after a read on another device (rule 7), by a
    /// clear, or by the user.
    case removed
}
