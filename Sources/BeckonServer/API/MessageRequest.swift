import BeckonProtocol
import BeckonJSON
import BeckonStore
import Foundation

/// The body of `POST /v1/messages`, checked field by field.
struct MessageRequest {
    var users: [String]
    var devices: [String]
    var kind: MessageKind
    /// The payload re-encoded with sorted keys: the same JSON always gives the same bytes, so an
    /// idempotent retry compares equal even if the backend's encoder orders keys differently.
    var payload: Data
    var hints: NotificationHints?
    var urgency: MessageUrgency
    var expiresAt: Date?
    var ttlSeconds: Int64?
    var idempotencyKey: String?

    static let fields: Set<String> = [
        "recipients", "kind", "payload", "notification", "urgency", "expiresAt", "ttlSeconds", "idempotencyKey",
    ]
    static let notificationFields: Set<String> = [
        "title", "subtitle", "body", "titleLocKey", "titleLocArgs", "locKey", "locArgs", "threadId", "category", "sound",
    ]

    init(_ body: JSONValue, maxRecipients: Int) throws(APIError) {
        let reader = try JSONObjectReader(body, path: "", allowed: Self.fields)
        guard let recipients = try reader.object("recipients", allowed: ["users", "devices"]) else {
            throw .invalidField("recipients", "is required")
        }
        users = try recipients.identifierArray("users", maxCount: maxRecipients) ?? []
        devices = try recipients.identifierArray("devices", maxCount: maxRecipients) ?? []
        guard !users.isEmpty || !devices.isEmpty else {
            throw .invalidField("recipients", "must name at least one user or device")
        }
        guard users.count + devices.count <= maxRecipients else {
            throw .invalidField("recipients", "must name at most \(maxRecipients) users and devices")
        }
        kind = try reader.enumeration("kind", MessageKind.self) ?? .message
        urgency = try reader.enumeration("urgency", MessageUrgency.self) ?? .normal
        payload = reader.value("payload").map { Data($0.bytes) } ?? Data()

        if let notification = try reader.object("notification", allowed: Self.notificationFields) {
            hints = NotificationHints(
                title: try notification.string("title", maxLength: 4096),
                subtitle: try notification.string("subtitle", maxLength: 4096),
                body: try notification.string("body", maxLength: 4096),
                titleLocKey: try notification.string("titleLocKey", maxLength: 256),
                titleLocArgs: try notification.stringArray("titleLocArgs", maxCount: 32, maxLength: 1024),
                locKey: try notification.string("locKey", maxLength: 256),
                locArgs: try notification.stringArray("locArgs", maxCount: 32, maxLength: 1024),
                threadID: try notification.string("threadId", maxLength: 256),
                category: try notification.string("category", maxLength: 256),
                sound: try notification.string("sound", maxLength: 256))
        }

        if let text = try reader.string("expiresAt", maxLength: 64) {
            guard let date = APIJSON.parseTimestamp(text) else {
                throw .invalidField("expiresAt", "must be an RFC 3339 time, e.g. 2030-01-01T00:00:00Z")
            }
            expiresAt = date
        }
        ttlSeconds = try reader.integer("ttlSeconds")
        if let ttlSeconds {
            guard expiresAt == nil else { throw .invalidField("ttlSeconds", "give either expiresAt or ttlSeconds, not both") }
            guard ttlSeconds > 0, ttlSeconds <= 366 * 86400 else {
                throw .invalidField("ttlSeconds", "must be between 1 and 31622400 (a year)")
            }
        }
        idempotencyKey = try reader.identifier("idempotencyKey")
    }
}
