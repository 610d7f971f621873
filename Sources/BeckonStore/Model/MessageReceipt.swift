import BeckonProtocol
import Foundation

/// One thing that happened to a message on one device, as the device (or its sync session)
/// reported it. The first report of each kind counts: a receipt repeated is ignored.
public struct MessageReceipt: Hashable, Sendable {
    public var device: DeviceRef
    public var messageID: String
    public var kind: ReceiptKind
    public var at: Date

    public init(device: DeviceRef, messageID: String, kind: ReceiptKind, at: Date) {
        self.device = device
        self.messageID = messageID
        self.kind = kind
        self.at = at
    }
}
