import BeckonJSON
import BeckonStore
import Foundation

extension MessageEvent {
    /// The event as webhooks and the stream send it (openapi.yaml, `MessageEvent`): ids as
    /// strings, the time in RFC 3339 with milliseconds, absent fields left out.
    public func write(to writer: inout JSONWriter) {
        writer.beginObject()
        writer.member("id", String(id))
        writer.member("type", kind.rawValue)
        writer.member("at", at.formatted(Date.ISO8601FormatStyle(includingFractionalSeconds: true)))
        writer.member("appId", appID)
        writer.member("messageId", messageID)
        writer.member("userId", userID)
        writer.member("deviceId", deviceID)
        writer.member("pushId", pushID)
        writer.member("apnsId", apnsID)
        writer.member("status", status)
        writer.member("reason", reason)
        writer.endObject()
    }

    public var json: [UInt8] {
        var writer = JSONWriter()
        write(to: &writer)
        return writer.bytes
    }

    /// A webhook's body: `{"events": [...]}`, in the log's order.
    public static func webhookBody(_ events: some Sequence<MessageEvent>) -> [UInt8] {
        var writer = JSONWriter()
        writer.beginObject()
        writer.key("events")
        writer.beginArray()
        for event in events { event.write(to: &writer) }
        writer.endArray()
        writer.endObject()
        return writer.bytes
    }
}
