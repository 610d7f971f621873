import BeckonStore
import Foundation

/// A frame a device sends over `/v1/sync` (docs/sync-protocol.md, "Frames", client → server).
enum SyncClientFrame: Equatable, Sendable {
    case hello(version: Int64, cursor: Int64, window: Int64?)
    case ack(upTo: Int64)
    case read(ids: [String])
    /// `id` is echoed as it came (any JSON value), or left out.
    case ping(id: JSONValue?)
    case bye

    /// The most ids one `read` frame may carry.
    static let maximumReadIDs = 1000

    /// Parses one text message. Unknown fields are ignored (the spec allows optional additions
    /// within a version); an unknown `type`, a missing or mistyped field is a violation.
    static func parse(_ text: String) -> Result<SyncClientFrame, SyncProtocolViolation> {
        guard case .object(let object)? = try? JSONDecoder().decode(JSONValue.self, from: Data(text.utf8)) else {
            return .failure(.init(code: "malformed_frame", message: "a frame is one JSON object"))
        }
        guard case .string(let type)? = object["type"] else {
            return .failure(.init(code: "malformed_frame", message: "type: a string is required"))
        }
        func integer(_ key: String, required: Bool = true) -> Result<Int64?, SyncProtocolViolation> {
            switch object[key] {
            case .integer(let value)?: return .success(value)
            case nil, .null?: return required ? .failure(.init(code: "invalid_field", message: "\(key): required")) : .success(nil)
            default: return .failure(.init(code: "invalid_field", message: "\(key): must be an integer"))
            }
        }
        switch type {
        case "hello":
            return integer("version").flatMap { version in
                integer("cursor").flatMap { cursor in
                    integer("window", required: false).map { window in
                        .hello(version: version!, cursor: cursor!, window: window)
                    }
                }
            }
        case "ack":
            return integer("upTo").map { .ack(upTo: $0!) }
        case "read":
            guard case .array(let values)? = object["ids"] else {
                return .failure(.init(code: "invalid_field", message: "ids: an array of message ids is required"))
            }
            guard values.count <= maximumReadIDs else {
                return .failure(.init(code: "invalid_field", message: "ids: at most \(maximumReadIDs) per frame"))
            }
            var ids: [String] = []
            for value in values {
                guard case .string(let id) = value, !id.isEmpty, id.utf8.count <= 128 else {
                    return .failure(.init(code: "invalid_field", message: "ids: each must be a message id string"))
                }
                ids.append(id.lowercased())
            }
            return .success(.read(ids: ids))
        case "ping":
            return .success(.ping(id: object["id"]))
        case "bye":
            return .success(.bye)
        default:
            return .failure(.init(code: "unknown_type", message: "type: \"\(type.prefix(64))\" is not a frame of version 1"))
        }
    }
}

/// Why the server ends a session with 4008: sent first as an `error` frame.
struct SyncProtocolViolation: Error, Equatable, Sendable {
    var code: String
    var message: String
}

/// A frame the server sends (docs/sync-protocol.md, "Frames", server → client).
enum SyncServerFrame: Equatable, Sendable {
    case welcome(version: Int, sessionID: String, lastSequence: Int64, window: Int)
    case message(MailboxEntry)
    case readElsewhere(ids: [String], badge: Int)
    case pong(id: JSONValue?)
    case error(code: String, message: String)

    /// The frame as the text of one WebSocket message.
    ///
    /// `message` frames are written by hand so the stored payload (JSON that `POST /v1/messages`
    /// validated and stored) is spliced in as it is, without decoding and re-encoding it for
    /// every device: this is the hot path of the gateway.
    var text: String {
        switch self {
        case .welcome(let version, let sessionID, let lastSequence, let window):
            return #"{"lastSequence":\#(lastSequence),"sessionId":"\#(sessionID)","type":"welcome","version":\#(version),"window":\#(window)}"#
        case .message(let entry):
            let message = entry.message
            var text = #"{"createdAt":\#(Self.milliseconds(message.createdAt))"#
            if let expiresAt = message.expiresAt { text += #","expiresAt":\#(Self.milliseconds(expiresAt))"# }
            text += #","id":\#(Self.quoted(message.id)),"kind":\#(Self.quoted(message.kind.rawValue))"#
            // An empty payload was none (see MailboxMessageBody).
            text += #","payload":"#
            text += message.payload.isEmpty ? "null" : String(decoding: message.payload, as: UTF8.self)
            text += #","seq":\#(entry.sequence),"type":"message"}"#
            return text
        case .readElsewhere(let ids, let badge):
            return String(decoding: APIJSON.encode(ReadElsewhereBody(ids: ids, badge: badge)), as: UTF8.self)
        case .pong(let id):
            return String(decoding: APIJSON.encode(PongBody(id: id)), as: UTF8.self)
        case .error(let code, let message):
            return String(decoding: APIJSON.encode(ErrorBody(code: code, message: message)), as: UTF8.self)
        }
    }

    static func milliseconds(_ date: Date) -> Int64 { Int64((date.timeIntervalSince1970 * 1000).rounded(.down)) }

    static func quoted(_ string: String) -> String {
        String(decoding: APIJSON.encode(string), as: UTF8.self)
    }

    private struct ReadElsewhereBody: Encodable {
        var type = "readElsewhere"
        var ids: [String]
        var badge: Int
    }

    private struct PongBody: Encodable {
        var type = "pong"
        var id: JSONValue?
    }

    private struct ErrorBody: Encodable {
        var type = "error"
        var code: String
        var message: String
    }
}
