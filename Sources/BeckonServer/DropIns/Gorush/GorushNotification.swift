import APNSCore
import BeckonDelivery
import BeckonJSON
import BeckonProtocol
import BeckonStore
import Foundation

/// One entry of gorush's `POST /api/push` body (`notifications[i]`), the iOS fields of it
/// (docs/drop-ins.md, "gorush"). Unknown fields are ignored, as gorush does. What it asks for
/// becomes a `RelayedPush`: the push gorush would send, field by field, kept within Apple's rules
/// by the typed model.
struct GorushNotification {
    /// gorush's platform numbers: 1 iOS, 2 Android, 3 Huawei.
    static let iOS: Int64 = 1

    var tokens: [String]
    var platform: Int64
    var topic: String?
    /// What the mailbox keeps of the text (the trace and the status page).
    var hints: NotificationHints
    /// The push itself, or why this entry is not pushed (each of its tokens is then logged as a
    /// failed push, and the other entries go on).
    var push: Result<RelayedPush, Refusal>
    /// `data`: keys at the top of the payload, beside `aps`.
    var data: [String: JSONValue]
    var expiresAt: Date?
    /// `development: true`: the tokens are sandbox tokens; `production: true`: production ones.
    var environment: PushEnvironment?

    /// An entry Beckon does not push, and why (a sentence for gorush's `logs[].error`).
    struct Refusal: Error, Equatable {
        var reason: String
    }

    /// gorush's `push_type` values Beckon relays.
    static let relayedPushTypes: Set<String> = ["alert", "background"]

    init(_ value: JSONValue, path: String) throws(APIError) {
        let entry = try JSONObjectReader(value, path: path, allowed: nil)
        guard case .array(let list)? = entry.value("tokens"), !list.isEmpty else {
            throw .invalidField(entry.name("tokens"), "must be a non-empty array of device tokens")
        }
        guard list.count <= 1000 else { throw .invalidField(entry.name("tokens"), "must hold at most 1000 tokens") }
        tokens = try list.enumerated().map { (index, item) throws(APIError) in
            guard case .string(let token) = item else { throw .invalidField(entry.name("tokens[\(index)]"), "must be a string") }
            return token
        }
        guard let platform = try entry.integer("platform") else { throw .invalidField(entry.name("platform"), "is required") }
        self.platform = platform
        topic = try entry.string("topic", maxLength: 255)
        if case .object(let data)? = entry.value("data") {
            self.data = data
        } else if entry.has("data") {
            throw .invalidField(entry.name("data"), "must be an object")
        } else {
            data = [:]
        }
        expiresAt = try entry.integer("expiration").flatMap { $0 > 0 ? Date(timeIntervalSince1970: TimeInterval($0)) : nil }
        if try entry.bool("development") == true {
            environment = .sandbox
        } else if try entry.bool("production") == true {
            environment = .production
        }
        let alert = try Self.alert(entry)
        hints = NotificationHints(
            title: alert?.title, subtitle: alert?.subtitle, body: alert?.body, threadID: try Self.threadID(entry),
            category: try entry.string("category", maxLength: 256))
        push = Result { () throws(Refusal) in try Self.push(entry, alert: alert) }
    }

    /// `alert.*` over the flat `title` and `message`, as gorush builds it: `message` is the body.
    private static func alert(_ entry: JSONObjectReader) throws(APIError) -> APNSAlert? {
        let object = try entry.object("alert", allowed: nil)
        func text(_ key: String) throws(APIError) -> String? {
            try object?.string(key, maxLength: 4096).flatMap { $0.isEmpty ? nil : $0 }
        }
        func flat(_ key: String) throws(APIError) -> String? {
            try entry.string(key, maxLength: 4096).flatMap { $0.isEmpty ? nil : $0 }
        }
        let title = try text("title")
        let body = try text("body")
        let alert = APNSAlert(
            title: title != nil ? title : try flat("title"),
            subtitle: try text("subtitle"),
            body: body != nil ? body : try flat("message"),
            launchImage: try text("launch-image"),
            titleLocKey: try text("title-loc-key"), titleLocArgs: try object?.stringArray("title-loc-args", maxCount: 32),
            locKey: try text("loc-key"), locArgs: try object?.stringArray("loc-args", maxCount: 32),
            summaryArg: try text("summary-arg"),
            summaryArgCount: try object?.integer("summary-arg-count").flatMap { $0 > 0 ? Int(clamping: $0) : nil },
            action: try text("action"), actionLocKey: try text("action-loc-key"))
        return alert == APNSAlert() ? nil : alert
    }

    /// gorush's `thread-id`; `thread_id`, which Beckon read before, still counts.
    private static func threadID(_ entry: JSONObjectReader) throws(APIError) -> String? {
        if let threadID = try entry.string("thread-id", maxLength: 256) { return threadID }
        return try entry.string("thread_id", maxLength: 256)
    }

    /// The push gorush would send for the entry, within Apple's rules, or why it is not sent.
    private static func push(_ entry: JSONObjectReader, alert: APNSAlert?) throws(Refusal) -> RelayedPush {
        do {
            let pushType = try entry.string("push_type", maxLength: 64).flatMap { $0.isEmpty ? nil : $0 }
            if pushType == "liveactivity" || entry.has("content-state") || entry.has("event") {
                throw Refusal(reason: "Live Activity pushes are not supported yet")
            }
            if let pushType, !relayedPushTypes.contains(pushType) {
                throw Refusal(reason: "push_type \(pushType) is not supported: Beckon relays alert and background pushes")
            }
            // gorush leaves a negative badge out.
            let badge = try entry.integer("badge").flatMap { $0 >= 0 ? Int(clamping: $0) : nil }
            let sound = try Self.sound(entry)
            let contentAvailable = try entry.bool("content_available") ?? false
            let shows = alert != nil || badge != nil || sound != nil
            // `content_available` alone is a silent update: a background push, priority 5 (apns.md
            // D.4), where gorush would send an alert-type push iOS does not treat as one.
            let kind: RelayedPush.Kind = pushType == "background" || (pushType == nil && contentAvailable && !shows)
                ? .background : .alert
            if kind == .background, shows {
                throw Refusal(reason: "a background push shows nothing: no alert, badge or sound (apns.md D.4); use push_type alert")
            }
            if kind == .alert, !shows {
                // Apple: an alert push must show something (apns.md D.4).
                throw Refusal(reason: "nothing to show: give a message, title, alert, badge or sound (or content_available alone for a background push)")
            }
            let priority = try entry.string("priority", maxLength: 16)
            guard priority == nil || priority == "normal" || priority == "high" || priority == "" else {
                throw Refusal(reason: "priority must be normal or high")
            }
            let level = try entry.string("interruption_level", maxLength: 32).flatMap { $0.isEmpty ? nil : $0 }
            let interruptionLevel = try level.map { (text) throws(Refusal) in
                guard let level = APNSInterruptionLevel(rawValue: text) else {
                    throw Refusal(reason: "interruption_level must be passive, active, time-sensitive or critical")
                }
                return level
            }
            // Apple: `apns-id` is a UUID in its canonical form (apns.md A.2); gorush sends any
            // string and APNs answers BadMessageId.
            let apnsID = try entry.string("apns_id", maxLength: 64).flatMap { $0.isEmpty ? nil : $0 }
            let callerID = try apnsID.map { (text) throws(Refusal) in
                guard let id = UUID(uuidString: text), text.count == 36 else {
                    throw Refusal(reason: "apns_id must be a UUID, as 123e4567-e89b-12d3-a456-4266554400a0")
                }
                return id
            }
            let collapseID = try entry.string("collapse_id", maxLength: 1024).flatMap { $0.isEmpty ? nil : $0 }
            if let collapseID, collapseID.utf8.count > 64 {
                throw Refusal(reason: "collapse_id must be at most 64 bytes (apns.md A.2)")
            }
            return RelayedPush(
                kind: kind, considerPower: priority == "normal", alert: alert, badge: badge, sound: sound,
                threadID: try threadID(entry), category: try entry.string("category", maxLength: 256),
                contentAvailable: contentAvailable, mutableContent: try entry.bool("mutable_content") ?? false,
                interruptionLevel: interruptionLevel, relevanceScore: try number(entry, "relevance-score"),
                urlArgs: try entry.stringArray("url-args", maxCount: 32), collapseID: collapseID, apnsID: callerID)
        } catch let error as Refusal {
            throw error
        } catch {
            throw Refusal(reason: (error as? APIError)?.message ?? "\(error)")
        }
    }

    /// A sound only when asked: a name, or gorush's critical-alert object (`critical`, `name`,
    /// `volume`), with the top-level `name` and `volume` over it, as gorush merges them.
    private static func sound(_ entry: JSONObjectReader) throws(APIError) -> APNSSound? {
        var name: String?
        var critical = false
        var volume: Double?
        switch entry.value("sound") {
        case .string(let text)?: name = text.isEmpty ? nil : text
        case .object?:
            let object = try entry.object("sound", allowed: nil)
            name = try object?.string("name", maxLength: 256)
            critical = try object.map { (object) throws(APIError) in try number(object, "critical").map { $0 != 0 } ?? false } ?? false
            volume = try object.flatMap { (object) throws(APIError) in try number(object, "volume") }
        case nil: break
        case let other?: throw .invalidField(entry.name("sound"), "must be a string or an object, not \(other.typeName)")
        }
        if let topName = try entry.string("name", maxLength: 256), !topName.isEmpty { name = topName }
        if let topVolume = try number(entry, "volume"), topVolume > 0 { volume = topVolume }
        if critical || volume != nil { return .critical(name: name ?? "default", volume: volume ?? 1) }
        return name.map(APNSSound.named)
    }

    /// A JSON number (or boolean, for gorush's `critical: true`).
    private static func number(_ object: JSONObjectReader, _ key: String) throws(APIError) -> Double? {
        switch object.value(key) {
        case .int(let value)?: return Double(value)
        case .double(let value)?: return value
        case .bool(let flag)?: return flag ? 1 : 0
        case nil: return nil
        case let other?: throw .invalidField(object.name(key), "must be a number, not \(other.typeName)")
        }
    }
}
