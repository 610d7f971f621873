import BeckonJSON
import Foundation

/// Reads the members of one frame object with the protocol's rules: a missing or mistyped
/// required field is `invalid_field`, naming the field; unknown members are ignored (either side
/// may add optional fields within a version).
struct FrameFields {
    let members: [String: JSONValue]

    /// Parses one text message into its members and `type`.
    static func parse(_ text: String) throws(SyncFrameError) -> (type: String, fields: FrameFields) {
        guard case .object(let members)? = try? JSONParser.parse(Array(text.utf8)) else {
            throw SyncFrameError(.malformedFrame, "a frame is one JSON object")
        }
        guard case .string(let type)? = members["type"] else {
            throw SyncFrameError(.malformedFrame, "type: a string is required")
        }
        return (type, FrameFields(members: members))
    }

    subscript(key: String) -> JSONValue? {
        if case .null? = members[key] { return nil }
        return members[key]
    }

    func int(_ key: String) throws(SyncFrameError) -> Int64 {
        guard let value = try optionalInt(key) else { throw SyncFrameError(.invalidField, "\(key): required") }
        return value
    }

    func optionalInt(_ key: String) throws(SyncFrameError) -> Int64? {
        guard let value = self[key] else { return nil }
        guard case .int(let int) = value else { throw SyncFrameError(.invalidField, "\(key): must be an integer") }
        return Int64(int)
    }

    func string(_ key: String) throws(SyncFrameError) -> String {
        guard case .string(let value)? = self[key] else { throw SyncFrameError(.invalidField, "\(key): a string is required") }
        return value
    }

    func bool(_ key: String, default fallback: Bool) throws(SyncFrameError) -> Bool {
        guard let value = self[key] else { return fallback }
        guard case .bool(let bool) = value else { throw SyncFrameError(.invalidField, "\(key): must be a boolean") }
        return bool
    }

    /// A raw-value enum member (`role`, `kind`, `outcome`).
    func value<Value: RawRepresentable>(_ key: String, default fallback: Value? = nil) throws(SyncFrameError) -> Value
    where Value.RawValue == String {
        guard let raw = self[key] else {
            guard let fallback else { throw SyncFrameError(.invalidField, "\(key): required") }
            return fallback
        }
        guard case .string(let text) = raw, let value = Value(rawValue: text) else {
            throw SyncFrameError(.invalidField, "\(key): not a known value")
        }
        return value
    }

    /// Message ids: non-empty strings of at most `SyncProtocol.maximumIDBytes`, lowercased, at
    /// most `SyncProtocol.maximumReadIDs` of them.
    func ids(_ key: String) throws(SyncFrameError) -> [String] {
        guard case .array(let values)? = self[key] else {
            throw SyncFrameError(.invalidField, "\(key): an array of message ids is required")
        }
        guard values.count <= SyncProtocol.maximumReadIDs else {
            throw SyncFrameError(.invalidField, "\(key): at most \(SyncProtocol.maximumReadIDs) per frame")
        }
        var ids: [String] = []
        ids.reserveCapacity(values.count)
        for value in values {
            guard case .string(let id) = value, !id.isEmpty, id.utf8.count <= SyncProtocol.maximumIDBytes else {
                throw SyncFrameError(.invalidField, "\(key): each must be a message id string")
            }
            ids.append(id.lowercased())
        }
        return ids
    }

    /// `receipts.items`: at most `SyncProtocol.maximumReceipts`, each `{id, kind, at}` (`at` in
    /// ms since 1970). An item of a kind this version does not know is skipped, so a newer client
    /// can report more.
    func receipts(_ key: String) throws(SyncFrameError) -> [SyncReceipt] {
        guard case .array(let values)? = self[key] else {
            throw SyncFrameError(.invalidField, "\(key): an array of receipts is required")
        }
        guard values.count <= SyncProtocol.maximumReceipts else {
            throw SyncFrameError(.invalidField, "\(key): at most \(SyncProtocol.maximumReceipts) per frame")
        }
        var receipts: [SyncReceipt] = []
        for value in values {
            guard case .object(let item) = value, case .string(let id)? = item["id"], !id.isEmpty,
                id.utf8.count <= SyncProtocol.maximumIDBytes, case .string(let kind)? = item["kind"], case .int(let at)? = item["at"]
            else {
                throw SyncFrameError(.invalidField, "\(key): each must be {id, kind, at}, at in milliseconds")
            }
            guard let known = ReceiptKind(rawValue: kind) else { continue }
            receipts.append(SyncReceipt(messageID: id.lowercased(), kind: known, at: Date(timeIntervalSince1970: Double(at) / 1000)))
        }
        return receipts
    }
}
