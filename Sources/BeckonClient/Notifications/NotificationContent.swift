import BeckonJSON
import BeckonProtocol

/// What a notification shows: the fields of `UNNotificationContent` the SDK sets. Text is
/// either literal (`title`, `body`) or a key of the app's Localizable.strings (`locKey`), as
/// in an APNs alert (apns.md D.2).
public struct NotificationContent: Hashable, Sendable {
    /// The first line.
    public var title: String?
    /// The line under the title.
    public var subtitle: String?
    /// The text.
    public var body: String?
    /// A key of the app's `Localizable.strings` for the title, when there is no `title`.
    public var titleLocKey: String?
    /// The arguments of `titleLocKey`.
    public var titleLocArgs: [String]?
    /// A key of the app's `Localizable.strings` for the text, when there is no `body`.
    public var locKey: String?
    /// The arguments of `locKey`.
    public var locArgs: [String]?
    /// Groups notifications of one conversation.
    public var threadID: String?
    /// The category whose actions the notification offers.
    public var category: String?
    /// The sound's name ("default" for the system's); nil: silent.
    public var sound: String?
    /// The app icon's badge; nil: unchanged.
    public var badge: Int?
    /// Carried in `userInfo`, so a tap can be routed (the `beckon` object names the message).
    public var userInfo: [String: JSONValue]

    /// Every field is optional; a notification with neither text nor key is never shown blank.
    public init(
        title: String? = nil, subtitle: String? = nil, body: String? = nil, titleLocKey: String? = nil,
        titleLocArgs: [String]? = nil, locKey: String? = nil, locArgs: [String]? = nil, threadID: String? = nil,
        category: String? = nil, sound: String? = nil, badge: Int? = nil, userInfo: [String: JSONValue] = [:]
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
        self.badge = badge
        self.userInfo = userInfo
    }

    /// Whether it shows any text. A notification without text is the one thing an app must
    /// never show (docs/design.md, "Small, bounded extensions").
    public var hasText: Bool {
        [title, subtitle, body, titleLocKey, locKey].contains { $0?.isEmpty == false }
    }

    /// The text a message's hints describe (the operator's `notification` object).
    public init(hints: NotificationHints) {
        self.init(
            title: hints.title, subtitle: hints.subtitle, body: hints.body, titleLocKey: hints.titleLocKey,
            titleLocArgs: hints.titleLocArgs, locKey: hints.locKey, locArgs: hints.locArgs, threadID: hints.threadID,
            category: hints.category, sound: hints.sound)
    }

    /// The text of sealed content, opened by the extension.
    public init(sealed: SealedContent) {
        self.init(
            title: sealed.title, subtitle: sealed.subtitle, body: sealed.body, titleLocKey: sealed.titleLocKey,
            titleLocArgs: sealed.titleLocArgs, locKey: sealed.locKey, locArgs: sealed.locArgs)
    }

    /// The alert of a push payload (`aps.alert`, `aps.thread-id`, ...), what iOS would show
    /// without the extension: the fallback that is never blank.
    public init(apsOf payload: JSONValue) {
        let aps = payload["aps"]
        let alert = aps?["alert"]
        func strings(_ value: JSONValue?) -> [String]? { value?.arrayValue?.compactMap(\.stringValue) }
        if let text = alert?.stringValue {
            self.init(body: text)
        } else {
            self.init(
                title: alert?["title"]?.stringValue, subtitle: alert?["subtitle"]?.stringValue,
                body: alert?["body"]?.stringValue, titleLocKey: alert?["title-loc-key"]?.stringValue,
                titleLocArgs: strings(alert?["title-loc-args"]), locKey: alert?["loc-key"]?.stringValue,
                locArgs: strings(alert?["loc-args"]))
        }
        threadID = aps?["thread-id"]?.stringValue
        category = aps?["category"]?.stringValue
        sound = aps?["sound"]?.stringValue
        badge = aps?["badge"]?.intValue
        if case .object(let members) = payload {
            userInfo = members.filter { $0.key != "aps" }
        }
    }

    /// Text from `other` where this has none; routing fields kept.
    func replacingText(with other: NotificationContent) -> NotificationContent {
        var merged = self
        merged.title = other.title
        merged.subtitle = other.subtitle
        merged.body = other.body
        merged.titleLocKey = other.titleLocKey
        merged.titleLocArgs = other.titleLocArgs
        merged.locKey = other.locKey
        merged.locArgs = other.locArgs
        merged.threadID = other.threadID ?? threadID
        merged.category = other.category ?? category
        merged.sound = other.sound ?? sound
        return merged
    }
}
