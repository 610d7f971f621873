import APNSCore
import BeckonDelivery
import BeckonJSON
import BeckonProtocol
import Foundation

/// The body of `POST /_matrix/push/v1/notify` (Matrix push gateway API, docs/drop-ins.md): what a
/// homeserver says happened, and the pushers (devices) to tell. Fields the spec may add later are
/// ignored, as a gateway must.
struct MatrixNotification {
    struct Device {
        var appID: String
        var pushkey: String
        /// When the pusher was last set (`pushkey_ts`, seconds): the token's registration time,
        /// which Apple's 410 is compared with (rule 8), and a pushkey set again after Beckon
        /// removed its refused token is taken again.
        var registeredAt: Date?
        /// `data.format == "event_id_only"`: nothing of the event may go through Apple.
        var eventIDOnly: Bool
        /// `tweaks.sound`: the user's push rule asks for a sound (Sygnal plays none unless the
        /// pusher's `default_payload` has one; Beckon honours the rule too, docs/drop-ins.md).
        var sound: String?
        /// `data.default_payload`: the pusher's keys beside `aps`, and its `aps` defaults.
        var defaultPayload: [String: JSONValue]
        var defaultAPS: APSDefaults?
        /// `data.default_payload` is there but not an object: Sygnal rejects the pushkey.
        var defaultPayloadMalformed: Bool
    }

    var eventID: String?
    var roomID: String?
    var type: String?
    var sender: String?
    var senderDisplayName: String?
    var roomName: String?
    var body: String?
    var unread: Int?
    var missedCalls: Int?
    /// `prio: low`: alerts at priority 5, as Sygnal sends them.
    var lowPriority: Bool
    var devices: [Device]

    init(_ value: JSONValue) throws(APIError) {
        let root = try JSONObjectReader(value, path: "", allowed: nil)
        guard let notification = try root.object("notification", allowed: nil) else {
            throw .invalidField("notification", "is required")
        }
        eventID = try notification.string("event_id", maxLength: 255)
        roomID = try notification.string("room_id", maxLength: 255)
        type = try notification.string("type", maxLength: 255)
        lowPriority = try notification.string("prio", maxLength: 16) == "low"
        // Names and the body are text for people, shortened rather than refused: a homeserver
        // retries a refusal for a day and holds the pusher's later pushes behind it (Sygnal
        // shortens them too, docs/drop-ins.md).
        sender = try notification.string("sender", maxLength: .max).map { Self.shortened($0, toBytes: Self.maximumNameBytes) }
        senderDisplayName = try notification.string("sender_display_name", maxLength: .max)
            .map { Self.shortened($0, toBytes: Self.maximumNameBytes) }
        roomName = try notification.string("room_name", maxLength: .max).map { Self.shortened($0, toBytes: Self.maximumNameBytes) }
        // The content is the event's; only its text body is of use, and only as a hint.
        body = try notification.object("content", allowed: nil).flatMap { content in
            if case .string(let text)? = content.value("body") { return Self.shortened(text, toBytes: Self.maximumBodyBytes) }
            return nil
        }
        let counts = try notification.object("counts", allowed: nil)
        unread = try counts?.integer("unread").map { Int(clamping: $0) }
        missedCalls = try counts?.integer("missed_calls").map { Int(clamping: $0) }
        guard case .array(let list)? = notification.value("devices"), !list.isEmpty else {
            throw .invalidField("notification.devices", "must be a non-empty array")
        }
        guard list.count <= 100 else { throw .invalidField("notification.devices", "must hold at most 100 pushers") }
        devices = try list.enumerated().map { (index, item) throws(APIError) in
            let device = try JSONObjectReader(item, path: "notification.devices[\(index)]", allowed: nil)
            let data = try device.object("data", allowed: nil)
            let format = try data?.string("format", maxLength: 64)
            // The spec says an object: anything else is a homeserver's bug, named rather than
            // passed over (Sygnal refuses it too).
            let tweaks = try device.object("tweaks", allowed: nil)
            let sound: String? = if case .string(let name)? = tweaks?.value("sound"), !name.isEmpty { name } else { nil }
            var defaultPayload: [String: JSONValue] = [:]
            var defaultAPS: APSDefaults?
            var malformed = false
            switch data?.value("default_payload") {
            case .object(let payload)?:
                defaultPayload = payload.filter { $0.key != "aps" }
                if case .object(let aps)? = payload["aps"] { defaultAPS = Self.apsDefaults(aps) }
            case nil: break
            case .some: malformed = true
            }
            return Device(
                appID: try device.requiredString("app_id", maxLength: 255),
                pushkey: try device.requiredString("pushkey", maxLength: 512),
                registeredAt: try device.integer("pushkey_ts").map { Date(timeIntervalSince1970: TimeInterval($0)) },
                eventIDOnly: format == "event_id_only", sound: sound, defaultPayload: defaultPayload,
                defaultAPS: defaultAPS, defaultPayloadMalformed: malformed)
        }
    }

    /// The most a name (room, sender) keeps, as Sygnal's field limit; the push's size is then
    /// fitted by the delivery code, which shortens the body (rule 2).
    static let maximumNameBytes = 1024
    /// As `POST /v1/messages` takes a body.
    static let maximumBodyBytes = 4096

    /// `text` in at most `bytes` bytes of UTF-8, cut between characters with an ellipsis when
    /// it is longer (a character split in two would make the JSON invalid).
    static func shortened(_ text: String, toBytes bytes: Int) -> String {
        guard text.utf8.count > bytes else { return text }
        let ellipsis = "…"
        var kept = 0
        var end = text.startIndex
        for index in text.indices {
            let cost = text[index].utf8.count
            guard kept + cost + ellipsis.utf8.count <= bytes else { break }
            kept += cost
            end = text.index(after: index)
        }
        return String(text[..<end]) + ellipsis
    }

    /// What an alert may show (only the `content` strategy puts it on the wire, rule 1), unless
    /// the pusher asked for `event_id_only`; and the sound its push rule asks for.
    func hints(for device: Device) -> NotificationHints? {
        guard eventID != nil else { return nil }
        guard !device.eventIDOnly else { return device.sound.map { NotificationHints(sound: $0) } }
        return NotificationHints(
            title: roomName ?? senderDisplayName ?? sender, body: body, threadID: roomID, sound: device.sound)
    }

    /// The badge as Sygnal counts it: unread messages and missed calls.
    var badge: Int? {
        guard unread != nil || missedCalls != nil else { return nil }
        return (unread ?? 0) + (missedCalls ?? 0)
    }

    /// The keys the app's notification extension fetches the event with, as Sygnal puts them at
    /// the top of an APNs payload over the pusher's `default_payload`, and the badge; an alert
    /// sounds only when asked, at priority 5 for `prio: low`.
    func extras(for device: Device) -> PushExtras {
        var custom = device.defaultPayload
        if let eventID { custom["event_id"] = .string(eventID) }
        if let roomID { custom["room_id"] = .string(roomID) }
        if let unread { custom["unread_count"] = .int(unread) }
        if let missedCalls { custom["missed_calls"] = .int(missedCalls) }
        return PushExtras(
            custom: custom, badge: badge, aps: device.defaultAPS, considerPower: lowPriority, soundOnlyWhenAsked: true)
    }

    /// A notification with counts and no event (Synapse's after a read): `{"aps":{"badge":N}}`
    /// alone, as Sygnal sends it, so the icon's count follows what was read.
    var badgeOnly: RelayedPush? {
        guard eventID == nil, let badge else { return nil }
        return RelayedPush(kind: .alert, considerPower: lowPriority, badge: badge)
    }

    /// The `aps` of a pusher's `default_payload` that Beckon's alerts can carry (apns.md D.1,
    /// D.2): a string alert is its body. Keys of other shapes are passed over.
    static func apsDefaults(_ aps: [String: JSONValue]) -> APSDefaults {
        func string(_ value: JSONValue?) -> String? { if case .string(let text)? = value { text } else { nil } }
        func strings(_ value: JSONValue?) -> [String]? {
            guard case .array(let items)? = value else { return nil }
            return items.compactMap { string($0) }
        }
        var alert: APNSAlert?
        switch aps["alert"] {
        case .string(let body)?: alert = APNSAlert(body: body)
        case .object(let fields)?:
            alert = APNSAlert(
                title: string(fields["title"]), subtitle: string(fields["subtitle"]), body: string(fields["body"]),
                launchImage: string(fields["launch-image"]), titleLocKey: string(fields["title-loc-key"]),
                titleLocArgs: strings(fields["title-loc-args"]), subtitleLocKey: string(fields["subtitle-loc-key"]),
                subtitleLocArgs: strings(fields["subtitle-loc-args"]), locKey: string(fields["loc-key"]),
                locArgs: strings(fields["loc-args"]))
        default: break
        }
        var sound: APNSSound?
        switch aps["sound"] {
        case .string(let name)? where !name.isEmpty: sound = .named(name)
        case .object(let fields)?:
            let volume: Double = switch fields["volume"] {
            case .int(let value)?: Double(value)
            case .double(let value)?: value
            default: 1
            }
            sound = .critical(name: string(fields["name"]) ?? "default", volume: volume)
        default: break
        }
        func flag(_ key: String) -> Bool {
            switch aps[key] {
            case .int(let value)?: value != 0
            case .bool(let value)?: value
            default: false
            }
        }
        return APSDefaults(
            alert: alert, sound: sound, category: string(aps["category"]), threadID: string(aps["thread-id"]),
            mutableContent: flag("mutable-content"), contentAvailable: flag("content-available"))
    }

    /// What the mailbox keeps of it: ids only (no device syncs it; it is the push's record).
    var payload: JSONValue {
        var object: [String: JSONValue] = [:]
        if let eventID { object["event_id"] = .string(eventID) }
        if let roomID { object["room_id"] = .string(roomID) }
        if let type { object["type"] = .string(type) }
        return .object(object)
    }
}
