import BeckonJSON
import BeckonStore
import Foundation

extension MessageEvent {
    /// The event as webhooks and the stream send it (openapi.yaml, `MessageEvent`): ids as
    /// strings, the time in RFC 3339 with milliseconds, absent fields left out.
    struct Body: Encodable {
        var id: String
        var type: String
        var at: Date
        var appId: String
        var messageId: String?
        var userId: String?
        var deviceId: String?
        var pushId: String?
        var apnsId: String?
        var status: Int?
        var reason: String?
    }

    /// A webhook's body, `{"events": [...]}`, in the log's order.
    struct Batch: Encodable {
        var events: [Body]
    }

    var body: Body {
        Body(
            id: String(id), type: kind.rawValue, at: at, appId: appID, messageId: messageID, userId: userID,
            deviceId: deviceID, pushId: pushID, apnsId: apnsID, status: status, reason: reason)
    }

    static let encoder = JSONStreamEncoder(options: [.rfc3339Dates])

    /// The event's JSON (one `data:` line of the stream).
    public var json: [UInt8] {
        (try? Self.encoder.encode(body)) ?? Array("{}".utf8)
    }

    public static func webhookBody(_ events: some Sequence<MessageEvent>) -> [UInt8] {
        (try? encoder.encode(Batch(events: events.map(\.body)))) ?? Array(#"{"events":[]}"#.utf8)
    }
}
