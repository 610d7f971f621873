import BeckonProtocol

/// What the SDK on a phone knows of its own receipts at a moment: the ones queued and not yet
/// sent (the app's session sends them; the extension has none), and the messages its notification
/// ledger records as shown. A notification iOS showed by itself is in neither until the app next
/// comes to the front (`NotificationPresenter.reconcile`), so a server without its `shown`
/// receipt is not wrong about it yet.
public struct PhoneReceipts: Hashable, Sendable {
    /// Message id → the kinds queued for it.
    public var pending: [String: Set<ReceiptKind>]
    /// Messages the ledger records a notification for (shown by the app, the extension, or found
    /// on screen by a reconcile).
    public var inLedger: Set<String>

    public init(pending: [String: Set<ReceiptKind>] = [:], inLedger: Set<String> = []) {
        self.pending = pending
        self.inLedger = inLedger
    }

    public func isPending(_ messageID: String, _ kind: ReceiptKind) -> Bool {
        pending[messageID]?.contains(kind) ?? false
    }
}
