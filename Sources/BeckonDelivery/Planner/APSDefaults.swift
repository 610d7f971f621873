import APNSCore

/// What a drop-in's caller says an alert carries where Beckon's strategy has nothing of its own
/// to say (a Matrix pusher's `default_payload.aps`, docs/drop-ins.md): the generic text in place
/// of Beckon's `loc-key`, a sound, a category, and flags that only add to Beckon's.
public struct APSDefaults: Hashable, Sendable, Codable {
    /// Shown when the strategy shows generic text (every strategy but `content` with hints).
    public var alert: APNSAlert?
    public var sound: APNSSound?
    public var category: String?
    public var threadID: String?
    /// Added to Beckon's own choice, never taken away (an extension that rewrites still runs).
    public var mutableContent: Bool
    public var contentAvailable: Bool

    public init(
        alert: APNSAlert? = nil, sound: APNSSound? = nil, category: String? = nil, threadID: String? = nil,
        mutableContent: Bool = false, contentAvailable: Bool = false
    ) {
        self.alert = alert
        self.sound = sound
        self.category = category
        self.threadID = threadID
        self.mutableContent = mutableContent
        self.contentAvailable = contentAvailable
    }
}
