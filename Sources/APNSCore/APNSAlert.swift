import BeckonJSON

/// The `alert` dictionary (apns.md D.2).
public struct APNSAlert: Hashable, Sendable, Codable {
    public var title: String?
    public var subtitle: String?
    public var body: String?
    public var launchImage: String?
    public var titleLocKey: String?
    public var titleLocArgs: [String]?
    public var subtitleLocKey: String?
    public var subtitleLocArgs: [String]?
    public var locKey: String?
    public var locArgs: [String]?
    /// iOS 12 to 15's group summary: what this notification adds to it, and how many items it
    /// counts for (apns.md D.2, legacy). Carried for callers that still send them (gorush).
    public var summaryArg: String?
    public var summaryArgCount: Int?
    /// Safari's button title (apns.md D.2, legacy).
    public var action: String?
    public var actionLocKey: String?

    public init(
        title: String? = nil, subtitle: String? = nil, body: String? = nil, launchImage: String? = nil,
        titleLocKey: String? = nil, titleLocArgs: [String]? = nil,
        subtitleLocKey: String? = nil, subtitleLocArgs: [String]? = nil,
        locKey: String? = nil, locArgs: [String]? = nil, summaryArg: String? = nil, summaryArgCount: Int? = nil,
        action: String? = nil, actionLocKey: String? = nil
    ) {
        self.summaryArg = summaryArg
        self.summaryArgCount = summaryArgCount
        self.action = action
        self.actionLocKey = actionLocKey
        self.title = title
        self.subtitle = subtitle
        self.body = body
        self.launchImage = launchImage
        self.titleLocKey = titleLocKey
        self.titleLocArgs = titleLocArgs
        self.subtitleLocKey = subtitleLocKey
        self.subtitleLocArgs = subtitleLocArgs
        self.locKey = locKey
        self.locArgs = locArgs
    }

    /// Apple: a notification service extension runs only for an alert with a title, subtitle or body.
    public var hasVisibleText: Bool {
        [title, subtitle, body, titleLocKey, subtitleLocKey, locKey].contains { $0?.isEmpty == false }
    }

    func write(to json: inout JSONWriter) {
        json.beginObject()
        json.member("title", title)
        json.member("subtitle", subtitle)
        json.member("body", body)
        json.member("launch-image", launchImage)
        json.member("title-loc-key", titleLocKey)
        json.member("title-loc-args", titleLocArgs)
        json.member("subtitle-loc-key", subtitleLocKey)
        json.member("subtitle-loc-args", subtitleLocArgs)
        json.member("loc-key", locKey)
        json.member("loc-args", locArgs)
        json.member("summary-arg", summaryArg)
        json.member("summary-arg-count", summaryArgCount)
        json.member("action", action)
        json.member("action-loc-key", actionLocKey)
        json.endObject()
    }
}

/// `aps.sound`: a file name, or the critical-alert dictionary (apns.md D.3).
public enum APNSSound: Hashable, Sendable, Codable {
    case named(String)
    /// Needs Apple's critical-alerts entitlement; bypasses the mute switch and Do Not Disturb.
    case critical(name: String, volume: Double)

    public static let `default` = APNSSound.named("default")

    func write(to json: inout JSONWriter) {
        switch self {
        case .named(let name):
            json.string(name)
        case .critical(let name, let volume):
            json.beginObject()
            json.key("critical"); json.int(1)
            json.key("name"); json.string(name)
            json.key("volume"); json.double(min(max(volume, 0), 1))
            json.endObject()
        }
    }
}

/// `aps.interruption-level` (apns.md D.1, E.5).
public enum APNSInterruptionLevel: String, Hashable, Sendable, CaseIterable, Codable {
    case passive
    case active
    case timeSensitive = "time-sensitive"
    case critical
}
