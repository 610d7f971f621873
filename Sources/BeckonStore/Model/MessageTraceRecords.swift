import Foundation

/// Everything the store keeps about one message's way to its recipients: what a trace is built
/// from (`MessageTrace` in BeckonDelivery). Records older than the trace retention are gone.
public struct MessageTraceRecords: Hashable, Sendable {
    public struct Read: Hashable, Sendable {
        public var userID: String
        /// The device the user read it on.
        public var deviceID: String
        public var at: Date

        public init(userID: String, deviceID: String, at: Date) {
            self.userID = userID
            self.deviceID = deviceID
            self.at = at
        }
    }

    public var message: Message
    /// Where it was stored, one position per recipient.
    public var positions: [MailboxPosition]
    /// The recipients' devices as registered now (a device deleted since is absent, though its
    /// pushes and receipts are not).
    public var devices: [Device]
    public var pushes: [TracedPush]
    public var receipts: [MessageReceipt]
    public var reads: [Read]

    public init(
        message: Message, positions: [MailboxPosition], devices: [Device], pushes: [TracedPush],
        receipts: [MessageReceipt], reads: [Read]
    ) {
        self.message = message
        self.positions = positions
        self.devices = devices
        self.pushes = pushes
        self.receipts = receipts
        self.reads = reads
    }
}
