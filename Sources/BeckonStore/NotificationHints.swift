/// What an alert for a message may show, if the planner sends one. Kept apart from the opaque
/// payload because content stays on the sync connection by default (design rule 1): these are
/// what the operator chose to let travel through Apple, or a `loc-key` the app resolves itself.
public struct NotificationHints: Hashable, Sendable, Codable {
    public var title: String?
    public var subtitle: String?
    public var body: String?
    public var titleLocKey: String?
    public var titleLocArgs: [String]?
    public var locKey: String?
    public var locArgs: [String]?
    public var threadID: String?
    public var category: String?
    public var sound: String?

    public init(
        title: String? = nil,
        subtitle: String? = nil,
        body: String? = nil,
        titleLocKey: String? = nil,
        titleLocArgs: [String]? = nil,
        locKey: String? = nil,
        locArgs: [String]? = nil,
        threadID: String? = nil,
        category: String? = nil,
        sound: String? = nil
    ) {
        self.title = title
        self.subtitle = subtitle
        self.body = body
        self.titleLocKey = titleLocKey
        self.titleLocArgs = titleLocArgs
        self.locKey = locKey
        self.locArgs = locArgs
        self.threadID = threadID
        self.category = category
        self.sound = sound
    }
}
