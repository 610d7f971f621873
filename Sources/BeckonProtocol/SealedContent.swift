/// The alert content a `content`-strategy push carries sealed for one device (rule 1: "content is
/// encrypted per device if asked"). The app's notification service extension opens it with
/// `ContentSeal.open` and shows it in place of the generic fallback text.
public struct SealedContent: Hashable, Sendable, Codable {
    /// The message the content belongs to; the extension checks it against the push's ids.
    public var messageID: String
    public var title: String?
    public var subtitle: String?
    public var body: String?
    public var titleLocKey: String?
    public var titleLocArgs: [String]?
    public var locKey: String?
    public var locArgs: [String]?

    public init(
        messageID: String, title: String? = nil, subtitle: String? = nil, body: String? = nil,
        titleLocKey: String? = nil, titleLocArgs: [String]? = nil, locKey: String? = nil, locArgs: [String]? = nil
    ) {
        self.messageID = messageID
        self.title = title
        self.subtitle = subtitle
        self.body = body
        self.titleLocKey = titleLocKey
        self.titleLocArgs = titleLocArgs
        self.locKey = locKey
        self.locArgs = locArgs
    }
}
