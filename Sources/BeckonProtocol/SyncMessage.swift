import Foundation

/// One message of the user's mailbox as a `message` frame carries it.
public struct SyncMessage: Hashable, Sendable {
    /// The user's mailbox sequence: what `ack` and `hello.cursor` count.
    public var sequence: Int64
    /// A lowercase UUID: the client deduplicates by it, and it is the notification identifier.
    public var id: String
    public var kind: MessageKind
    /// The backend's JSON as stored, spliced into the frame as it is (empty: none).
    public var payload: [UInt8]
    public var createdAt: Date
    public var expiresAt: Date?
    /// The user has read it on some device already: do not notify (v2).
    public var read: Bool

    public init(
        sequence: Int64, id: String, kind: MessageKind, payload: [UInt8], createdAt: Date, expiresAt: Date? = nil,
        read: Bool = false
    ) {
        self.sequence = sequence
        self.id = id
        self.kind = kind
        self.payload = payload
        self.createdAt = createdAt
        self.expiresAt = expiresAt
        self.read = read
    }
}
