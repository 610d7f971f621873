/// What a sync session's `welcome` needs, read at once (`ReadStateStore.sessionStart`).
public struct SessionStart: Sendable {
    public var lastSequence: Int64
    /// The user's unread count.
    public var badge: Int
    /// Read messages up to the device's cursor, newest first.
    public var readUpToCursor: [String]
    /// Calls that ended recently, with their outcome (`CallEndOutcome` raw values).
    public var endedCalls: [(callID: String, outcome: String)]

    public init(lastSequence: Int64, badge: Int, readUpToCursor: [String], endedCalls: [(callID: String, outcome: String)]) {
        self.lastSequence = lastSequence
        self.badge = badge
        self.readUpToCursor = readUpToCursor
        self.endedCalls = endedCalls
    }
}
