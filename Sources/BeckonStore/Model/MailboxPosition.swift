/// Where an appended message landed in one recipient's mailbox.
public struct MailboxPosition: Hashable, Sendable, Codable {
    public var userID: String
    public var sequence: Int64

    public init(userID: String, sequence: Int64) {
        self.userID = userID
        self.sequence = sequence
    }
}
