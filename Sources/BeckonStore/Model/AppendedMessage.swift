/// The outcome of appending one `NewMessage`.
public struct AppendedMessage: Hashable, Sendable {
    /// The stored message: the original one if this was a duplicate.
    public var message: Message
    /// One per distinct recipient: in the order the recipients were given, or in user-id order
    /// for a duplicate.
    public var positions: [MailboxPosition]
    /// True if the idempotency key had been used before: nothing was stored by this call, and
    /// the caller must not fan it out or push it again.
    public var isDuplicate: Bool

    public init(message: Message, positions: [MailboxPosition], isDuplicate: Bool) {
        self.message = message
        self.positions = positions
        self.isDuplicate = isDuplicate
    }
}
