/// A message as it sits in one user's mailbox: what the sync gateway sends, in `sequence` order.
public struct MailboxEntry: Hashable, Sendable, Codable {
    public var userID: String
    /// Per (app, user): 1, 2, 3, ... without gaps in assignment, never reused.
    public var sequence: Int64
    public var message: Message
    /// The user has read it on some device (a `message` frame says so, and the app does not
    /// notify it: seed 000's "read elsewhere" on resume).
    public var read: Bool

    public init(userID: String, sequence: Int64, message: Message, read: Bool = false) {
        self.userID = userID
        self.sequence = sequence
        self.message = message
        self.read = read
    }
}
