import BeckonJSON
import BeckonProtocol

/// A push as it reaches the phone from APNs: the headers iOS acts on and the payload.
public struct DevicePush: Hashable, Sendable {
    /// The `apns-id`: names the push in the timeline.
    public var id: String
    /// `apns-push-type`: `alert`, `background`, `voip`, ...
    public var type: String
    public var priority: Int
    public var collapseID: String?
    public var payload: JSONValue

    public init(id: String, type: String, priority: Int, collapseID: String?, payload: JSONValue) {
        self.id = id
        self.type = type
        self.priority = priority
        self.collapseID = collapseID
        self.payload = payload
    }

    var aps: [String: JSONValue] { payload["aps"]?.objectValue ?? [:] }

    /// `content-available: 1`: a background push the app is woken for (apns.md E.3).
    public var isContentAvailable: Bool { aps["content-available"]?.intValue == 1 }

    /// The alert has something to show: a title, subtitle or body, in text or as a `loc-key`.
    public var hasVisibleAlert: Bool {
        switch aps["alert"] {
        case .string(let text)?: !text.isEmpty
        case .object(let alert)?:
            ["title", "subtitle", "body", "loc-key", "title-loc-key"].contains { alert[$0] != nil }
        default: false
        }
    }

    /// The extension runs only for `mutable-content: 1` with a visible alert (apns.md E.4).
    public var wantsServiceExtension: Bool { aps["mutable-content"]?.intValue == 1 && hasVisibleAlert }

    public var badge: Int? { aps["badge"]?.intValue }

    /// The notification's identifier on the phone: the collapse id, else one iOS makes up (apns.md E.2).
    public var identifier: String { collapseID ?? id }

    /// Beckon's part of the payload, if any.
    public var beckon: BeckonPushPayload? { BeckonPushPayload(payload: payload) }

    /// Why the server sent it: Beckon's `reason`, or `clear-all` for the bare `{"aps":{"badge":0}}`.
    public var reason: String? {
        if let beckon { return beckon.reason.rawValue }
        return aps.count == 1 && badge == 0 ? PushReason.clearAll.rawValue : nil
    }

    /// The messages a notification of this push stands for: its `beckon.ids`, or those of the
    /// `userInfo` the extension rewrote (rule 11).
    public var messageIDs: [String] {
        get { rewrittenMessageIDs ?? beckon?.ids ?? [] }
        set { rewrittenMessageIDs = newValue }
    }
    private var rewrittenMessageIDs: [String]?

    /// What the notification says, as a person would read it on the lock screen.
    public var text: String { Self.text(ofAlert: aps["alert"]) }

    static func text(ofAlert alert: JSONValue?) -> String {
        switch alert {
        case .string(let text)?: return text
        case .object(let alert)?:
            let parts = ["title", "body"].compactMap { alert[$0]?.stringValue }
            if !parts.isEmpty { return parts.joined(separator: ": ") }
            return alert["loc-key"]?.stringValue ?? alert["title-loc-key"]?.stringValue ?? ""
        default: return ""
        }
    }
}
