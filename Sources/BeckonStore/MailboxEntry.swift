/// A message as it sits in one user's mailbox: what the sync gateway sends, in `sequence` order.
public struct MailboxEntry: Hashable, Sendable, Codable {
    public var userID: String
    /// Per (app, user): 1, 2, 3, ... without gaps in assignment, never reused.
    public var sequence: Int64
    public var message: Message

    public init(userID: String, sequence: Int64, message: Message) {
        self.userID = userID
        self.sequence = sequence
        self.message = message
    }
}
