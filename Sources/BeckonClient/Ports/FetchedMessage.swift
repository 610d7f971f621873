import BeckonJSON
import BeckonProtocol

/// One message as `GET /v1/messages/{id}` answers it.
public struct FetchedMessage: Hashable, Sendable {
    public var id: String
    public var sequence: Int64
    public var kind: MessageKind
    /// The backend's JSON.
    public var payload: JSONValue? {
        get { payloadBytes.flatMap { try? JSONParser.parse($0) } ?? parsedPayload }
        set {
            parsedPayload = newValue
            payloadBytes = nil
        }
    }
    /// The payload parsed, until `compacted()`.
    private var parsedPayload: JSONValue?
    /// The payload as bytes, after `compacted()`.
    private(set) var payloadBytes: [UInt8]?
    /// The operator's notification text for it, if any.
    public var hints: NotificationHints?

    public init(id: String, sequence: Int64, kind: MessageKind, payload: JSONValue?, hints: NotificationHints?) {
        self.id = id
        self.sequence = sequence
        self.kind = kind
        self.parsedPayload = payload
        self.hints = hints
    }

    /// The same message with its payload kept as bytes: a parsed tree takes many times the
    /// memory (`ExtensionBudget.answerFootprint`).
    func compacted() -> FetchedMessage {
        var copy = self
        copy.payloadBytes = parsedPayload?.bytes
        copy.parsedPayload = nil
        return copy
    }

    /// The payload's JSON text, for the store.
    var payloadJSONBytes: [UInt8]? { payloadBytes ?? parsedPayload?.bytes }

    /// Reads the answer's JSON (openapi.yaml, `MailboxMessage`).
    public init(json: JSONValue) throws(MessageFetchError) {
        guard let id = json["id"]?.stringValue, let sequence = json["sequence"]?.intValue,
            let kind = json["kind"]?.stringValue.flatMap(MessageKind.init(rawValue:))
        else { throw .malformed }
        var hints: NotificationHints?
        if case .object(let object)? = json["notification"] {
            func strings(_ key: String) -> [String]? { object[key]?.arrayValue?.compactMap(\.stringValue) }
            hints = NotificationHints(
                title: object["title"]?.stringValue, subtitle: object["subtitle"]?.stringValue,
                body: object["body"]?.stringValue, titleLocKey: object["titleLocKey"]?.stringValue,
                titleLocArgs: strings("titleLocArgs"), locKey: object["locKey"]?.stringValue, locArgs: strings("locArgs"),
                threadID: object["threadId"]?.stringValue, category: object["category"]?.stringValue,
                sound: object["sound"]?.stringValue)
        }
        let payload: JSONValue? = if case .null? = json["payload"] { nil } else { json["payload"] }
        self.init(id: id, sequence: Int64(sequence), kind: kind, payload: payload, hints: hints)
    }
}
