import BeckonJSON
import Foundation

/// A frame a device sends over `/v1/sync` (docs/sync-protocol.md, "Frames", client → server).
/// The server parses it, the client SDK writes it.
public enum SyncClientFrame: Hashable, Sendable {
    /// First frame, exactly once: resume after `cursor` (the last sequence durably stored on the
    /// device), with at most `window` messages unacknowledged.
    case hello(version: Int64, role: SyncRole, cursor: Int64, window: Int64?)
    /// Cumulative: every message with `seq ≤ upTo` is stored on the device.
    case ack(upTo: Int64)
    /// The user read these messages on this device.
    case read(ids: [String])
    /// What happened to messages on the device (shown, opened, removed, synced), batched. Sent
    /// only to a server whose `welcome` lists the `receipts` feature.
    case receipts([SyncReceipt])
    /// Keep-alive; `id` (any JSON value) is echoed in `pong`.
    case ping(id: JSONValue?)
    /// Clean close: the app is going to the background or signing out.
    case bye

    /// Parses one text message. Unknown fields are ignored; an unknown `type`, a missing or
    /// mistyped field is a violation.
    public static func parse(_ text: String) -> Result<SyncClientFrame, SyncFrameError> {
        Result { () throws(SyncFrameError) in
            let (type, fields) = try FrameFields.parse(text)
            switch type {
            case "hello":
                return .hello(
                    version: try fields.int("version"), role: try fields.value("role", default: SyncRole.app),
                    cursor: try fields.int("cursor"), window: try fields.optionalInt("window"))
            case "ack": return .ack(upTo: try fields.int("upTo"))
            case "read": return .read(ids: try fields.ids("ids"))
            case "receipts": return .receipts(try fields.receipts("items"))
            case "ping": return .ping(id: fields["id"])
            case "bye": return .bye
            default:
                throw SyncFrameError(.unknownType, "type: \"\(type.prefix(64))\" is not a frame of version \(SyncProtocol.version)")
            }
        }
    }

    /// The frame as the text of one WebSocket message. Written by hand like the server's frames: a
    /// `type`-tagged object, which synthesized `Codable` does not make (docs/design.md, "JSON").
    public var text: String {
        var writer = JSONWriter()
        writer.beginObject()
        switch self {
        case .hello(let version, let role, let cursor, let window):
            writer.member("type", "hello")
            writer.member("version", Int(version))
            writer.member("role", role.rawValue)
            writer.member("cursor", Int(cursor))
            writer.member("window", window.map(Int.init))
        case .ack(let upTo):
            writer.member("type", "ack")
            writer.member("upTo", Int(upTo))
        case .read(let ids):
            writer.member("type", "read")
            writer.member("ids", ids)
        case .receipts(let receipts):
            writer.member("type", "receipts")
            writer.key("items")
            writer.beginArray()
            for receipt in receipts {
                writer.beginObject()
                writer.member("id", receipt.messageID)
                writer.member("kind", receipt.kind.rawValue)
                writer.member("at", Int((receipt.at.timeIntervalSince1970 * 1000).rounded()))
                writer.endObject()
            }
            writer.endArray()
        case .ping(let id):
            writer.member("type", "ping")
            if let id { writer.key("id"); writer.value(id) }
        case .bye:
            writer.member("type", "bye")
        }
        writer.endObject()
        return String(decoding: writer.bytes, as: UTF8.self)
    }
}
