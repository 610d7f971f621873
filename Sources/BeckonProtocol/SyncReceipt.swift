import Foundation

/// One item of a `receipts` frame: what happened to a message on the device, and when
/// (docs/sync-protocol.md, "Receipts").
public struct SyncReceipt: Hashable, Sendable {
    public var messageID: String
    public var kind: ReceiptKind
    public var at: Date

    public init(messageID: String, kind: ReceiptKind, at: Date) {
        self.messageID = messageID
        self.kind = kind
        self.at = at
    }
}
