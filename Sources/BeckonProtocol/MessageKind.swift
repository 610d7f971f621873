/// What a message is for; the delivery planner pushes each kind differently (docs/design.md, "Message kinds and urgency").
public enum MessageKind: String, Hashable, Sendable, Codable, CaseIterable {
    /// Something the user reads: chat text, mail. Counts as unread.
    case message
    /// An incoming call: VoIP push or repeated alerts (design rule 6). Counts as unread.
    case call
    /// A delivery or read receipt: synced, never alerted.
    case receipt
    /// Anything else the app defines.
    case custom

    /// Whether the kind counts towards the unread count (the badge).
    public var countsAsUnread: Bool { self == .message || self == .call }
}
