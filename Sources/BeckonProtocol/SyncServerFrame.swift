import BeckonJSON
import Foundation

/// A frame the server sends over `/v1/sync` (docs/sync-protocol.md, "Frames", server → client).
/// The server writes it, the client SDK parses it.
public enum SyncServerFrame: Hashable, Sendable {
    /// Answer to `hello`: the user's newest sequence, the window granted, the user's unread
    /// count (the badge) and the optional frames the server accepts (`SyncProtocol.features`).
    /// Messages after the hello cursor follow.
    case welcome(version: Int, sessionID: String, lastSequence: Int64, window: Int, badge: Int, features: [String] = [])
    case message(SyncMessage)
    /// Another device read these: remove their notifications, set the badge (rule 7).
    case readElsewhere(ids: [String], badge: Int)
    /// The call ended: stop ringing, end the CallKit call (rule 6).
    case callEnded(callID: String, outcome: CallEndOutcome)
    case pong(id: JSONValue?)
    /// Sent before close 4008.
    case error(code: BeckonErrorCode, message: String)

    /// The frame as the text of one WebSocket message. Keys in sorted order, so a frame always
    /// has the same bytes. A `message` frame splices the stored payload in as it is, without
    /// decoding and re-encoding it for every device: this is the hot path of the gateway.
    public var text: String {
        var writer = JSONWriter()
        writer.beginObject()
        switch self {
        case .welcome(let version, let sessionID, let lastSequence, let window, let badge, let features):
            writer.member("badge", badge)
            if !features.isEmpty { writer.member("features", features) }
            writer.member("lastSequence", Int(lastSequence))
            writer.member("sessionId", sessionID)
            writer.member("type", "welcome")
            writer.member("version", version)
            writer.member("window", window)
        case .message(let message):
            writer.member("createdAt", Int(Self.milliseconds(message.createdAt)))
            writer.member("expiresAt", message.expiresAt.map { Int(Self.milliseconds($0)) })
            writer.member("id", message.id)
            writer.member("kind", message.kind.rawValue)
            writer.key("payload")
            if message.payload.isEmpty { writer.null() } else { writer.raw(message.payload) }
            writer.key("read")
            writer.bool(message.read)
            writer.member("seq", Int(message.sequence))
            writer.member("type", "message")
        case .readElsewhere(let ids, let badge):
            writer.member("badge", badge)
            writer.member("ids", ids)
            writer.member("type", "readElsewhere")
        case .callEnded(let callID, let outcome):
            writer.member("callId", callID)
            writer.member("outcome", outcome.rawValue)
            writer.member("type", "callEnded")
        case .pong(let id):
            if let id { writer.key("id"); writer.value(id) }
            writer.member("type", "pong")
        case .error(let code, let message):
            writer.member("code", code.rawValue)
            writer.member("message", message)
            writer.member("type", "error")
        }
        writer.endObject()
        return String(decoding: writer.bytes, as: UTF8.self)
    }

    /// Parses one text message from the server. Unknown fields are ignored; an unknown `type` is
    /// a violation (the client closes and reconnects: the server speaks another version).
    public static func parse(_ text: String) -> Result<SyncServerFrame, SyncFrameError> {
        Result { () throws(SyncFrameError) in
            let (type, fields) = try FrameFields.parse(text)
            switch type {
            case "welcome":
                return .welcome(
                    version: Int(try fields.int("version")), sessionID: try fields.string("sessionId"),
                    lastSequence: try fields.int("lastSequence"), window: Int(try fields.int("window")),
                    badge: Int(try fields.optionalInt("badge") ?? 0),
                    features: fields["features"]?.arrayValue?.compactMap(\.stringValue) ?? [])
            case "message":
                return .message(SyncMessage(
                    sequence: try fields.int("seq"), id: try fields.string("id"), kind: try fields.value("kind"),
                    payload: fields["payload"]?.bytes ?? [],
                    createdAt: date(try fields.int("createdAt")), expiresAt: try fields.optionalInt("expiresAt").map(date),
                    read: try fields.bool("read", default: false)))
            case "readElsewhere":
                return .readElsewhere(ids: try fields.ids("ids"), badge: Int(try fields.int("badge")))
            case "callEnded":
                return .callEnded(callID: try fields.string("callId"), outcome: try fields.value("outcome"))
            case "pong":
                return .pong(id: fields["id"])
            case "error":
                // A code this client does not know yet is still an error.
                let code = BeckonErrorCode(rawValue: try fields.string("code")) ?? .internalError
                return .error(code: code, message: try fields.string("message"))
            default:
                throw SyncFrameError(.unknownType, "type: \"\(type.prefix(64))\" is not a frame of version \(SyncProtocol.version)")
            }
        }
    }

    /// Times travel as milliseconds since 1970, the precision the store keeps.
    public static func milliseconds(_ date: Date) -> Int64 { Int64((date.timeIntervalSince1970 * 1000).rounded(.down)) }

    static func date(_ milliseconds: Int64) -> Date { Date(timeIntervalSince1970: Double(milliseconds) / 1000) }
}
