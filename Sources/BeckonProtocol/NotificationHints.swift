import BeckonJSON

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

extension NotificationHints {
    /// As JSON with the property names above (a VoIP push's `beckon.hints`).
    public var json: JSONValue {
        var object: [String: JSONValue] = [:]
        for (key, value) in [
            ("title", title), ("subtitle", subtitle), ("body", body), ("titleLocKey", titleLocKey),
            ("locKey", locKey), ("threadID", threadID), ("category", category), ("sound", sound),
        ] {
            if let value { object[key] = .string(value) }
        }
        if let titleLocArgs { object["titleLocArgs"] = .array(titleLocArgs.map(JSONValue.string)) }
        if let locArgs { object["locArgs"] = .array(locArgs.map(JSONValue.string)) }
        return .object(object)
    }

    /// Reads hints written by `json`; nil unless it is an object. Members of the wrong type are
    /// left out rather than failing the whole push.
    public init?(json: JSONValue) {
        guard case .object(let object) = json else { return nil }
        func strings(_ key: String) -> [String]? { object[key]?.arrayValue?.compactMap(\.stringValue) }
        self.init(
            title: object["title"]?.stringValue, subtitle: object["subtitle"]?.stringValue,
            body: object["body"]?.stringValue, titleLocKey: object["titleLocKey"]?.stringValue,
            titleLocArgs: strings("titleLocArgs"), locKey: object["locKey"]?.stringValue, locArgs: strings("locArgs"),
            threadID: object["threadID"]?.stringValue, category: object["category"]?.stringValue,
            sound: object["sound"]?.stringValue)
    }
}
