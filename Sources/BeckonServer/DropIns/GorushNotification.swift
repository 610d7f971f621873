import BeckonJSON
import BeckonProtocol
import BeckonStore
import Foundation

/// One entry of gorush's `POST /api/push` body (`notifications[i]`), the iOS fields of it
/// (docs/drop-ins.md). Unknown fields are ignored, as gorush does.
struct GorushNotification {
    /// gorush's platform numbers: 1 iOS, 2 Android, 3 Huawei.
    static let iOS: Int64 = 1

    var tokens: [String]
    var platform: Int64
    var topic: String?
    var hints: NotificationHints
    var badge: Int?
    /// `data`: keys at the top of the payload, beside `aps`.
    var data: [String: JSONValue]
    var expiresAt: Date?
    /// `development: true`: the tokens are sandbox tokens; `production: true`: production ones.
    var environment: PushEnvironment?

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
        let alert = try entry.object("alert", allowed: nil)
        // The sound is a name, or an object for critical alerts; the name is what Beckon keeps.
        let sound: String? = switch entry.value("sound") {
        case .string(let name)?: name
        case .object(let object)?: object["name"].flatMap { if case .string(let name) = $0 { name } else { nil } }
        default: nil
        }
        // `alert.*` when given, else the flat fields (`message` is the body).
        func text(_ alertKey: String, else key: String) throws(APIError) -> String? {
            if let value = try alert?.string(alertKey, maxLength: 4096) { return value }
            return try entry.string(key, maxLength: 4096)
        }
        hints = NotificationHints(
            title: try text("title", else: "title"), subtitle: try text("subtitle", else: "subtitle"),
            body: try text("body", else: "message"),
            titleLocKey: try alert?.string("title-loc-key", maxLength: 256),
            titleLocArgs: try alert?.stringArray("title-loc-args", maxCount: 32),
            locKey: try alert?.string("loc-key", maxLength: 256),
            locArgs: try alert?.stringArray("loc-args", maxCount: 32),
            threadID: try entry.string("thread_id", maxLength: 256), category: try entry.string("category", maxLength: 256),
            sound: sound)
        badge = try entry.integer("badge").map { Int(clamping: $0) }
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
    }

    /// A token as gorush's callers send them: hex, 8 to 100 bytes.
    static func isToken(_ token: String) -> Bool {
        token.utf8.count % 2 == 0 && (16...200).contains(token.utf8.count) && token.utf8.allSatisfy(\.isHexDigit)
    }
}

extension UInt8 {
    fileprivate var isHexDigit: Bool {
        (48...57).contains(self) || (65...70).contains(self) || (97...102).contains(self)
    }
}
