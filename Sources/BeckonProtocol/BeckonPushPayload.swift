import BeckonJSON

/// Beckon's part of a push payload: one object under the top-level key `"beckon"`, beside `aps`
/// (Apple: custom keys go at the top level, never inside `aps`; docs/apns.md D.1).
///
/// ```
/// "beckon": {
///   "reason": "wake",          // why it was sent (PushReason): how the client routes it
///   "ids":    ["m1", "m2"],     // messages to fetch over the sync connection (rule 1)
///   "clear":  ["m0"],           // notifications to remove: read on another device (rule 7)
///   "badge":  3,                // the unread count, on background pushes (no aps.badge there)
///   "call":   "c1",             // the call id (= the call message's id) on call pushes
///   "hints":  {"title": ...},   // VoIP only: what CallKit shows, since it cannot wait to fetch
///   "sealed": "base64",         // SealedContent sealed for this device (content strategy)
///   "unseen": 31                // alerts: how many unseen messages it stands for, when more than `ids` (rule 11)
/// }
/// ```
///
/// An alert's `ids` name every message the device has not seen, oldest first, the one it is for
/// last (rule 11). `ids` and `clear` hold at most the policy's `maximumIDsPerPush` newest ids: a background push
/// cannot be truncated, and the ids are hints — the app syncs everything after its cursor, and
/// reconciles read state, whenever it connects. The server writes it, the client SDK reads it.
public struct BeckonPushPayload: Hashable, Sendable {
    /// The top-level key.
    public static let key = "beckon"

    public var reason: PushReason
    public var ids: [String]
    public var clear: [String]
    public var badge: Int?
    public var callID: String?
    public var hints: NotificationHints?
    public var sealed: String?
    /// How many unseen messages an alert stands for, when `ids` could not name them all
    /// (rule 11): the app says "and N more" and syncs the rest.
    public var unseen: Int?

    public init(
        reason: PushReason, ids: [String] = [], clear: [String] = [], badge: Int? = nil, callID: String? = nil,
        hints: NotificationHints? = nil, sealed: String? = nil
    ) {
        self.reason = reason
        self.ids = ids
        self.clear = clear
        self.badge = badge
        self.callID = callID
        self.hints = hints
        self.sealed = sealed
    }

    /// The value of the `"beckon"` key.
    public var json: JSONValue {
        var object: [String: JSONValue] = ["reason": .string(reason.rawValue)]
        if !ids.isEmpty { object["ids"] = .array(ids.map(JSONValue.string)) }
        if !clear.isEmpty { object["clear"] = .array(clear.map(JSONValue.string)) }
        if let badge { object["badge"] = .int(badge) }
        if let callID { object["call"] = .string(callID) }
        if let hints { object["hints"] = hints.json }
        if let sealed { object["sealed"] = .string(sealed) }
        if let unseen { object["unseen"] = .int(unseen) }
        return .object(object)
    }

    /// The custom keys of a notification that carries this payload.
    public var custom: [String: JSONValue] { [Self.key: json] }

    /// Reads Beckon's part of a whole push payload (the `userInfo` iOS hands the app, as JSON).
    /// Nil when the push is not Beckon's or names an unknown reason (a newer server): the app
    /// then simply syncs.
    public init?(payload: JSONValue) {
        guard case .object(let object)? = payload[Self.key],
            let reason = object["reason"]?.stringValue.flatMap(PushReason.init(rawValue:))
        else { return nil }
        func strings(_ key: String) -> [String] { object[key]?.arrayValue?.compactMap(\.stringValue) ?? [] }
        self.init(
            reason: reason, ids: strings("ids"), clear: strings("clear"), badge: object["badge"]?.intValue,
            callID: object["call"]?.stringValue, hints: object["hints"].flatMap(NotificationHints.init(json:)),
            sealed: object["sealed"]?.stringValue)
        unseen = object["unseen"]?.intValue
    }
}
