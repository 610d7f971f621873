/// Any JSON value: request bodies, sync frames, push payloads' custom keys, the emulator's
/// control API. One type for the whole package, so a value read in one place is written in
/// another without conversion.
///
/// Integers are kept apart from other numbers (`int` when the text is an exact integer), because
/// the API must tell `"seq": 3` from `"seq": 3.5`, and APNs payloads are written as the caller
/// gave them.
public enum JSONValue: Sendable, Hashable {
    case null
    case bool(Bool)
    case int(Int)
    case double(Double)
    case string(String)
    case array([JSONValue])
    case object([String: JSONValue])

    /// Compact JSON with sorted keys, so the same value always gives the same bytes (what a
    /// message's payload is stored as and fingerprinted by).
    public var bytes: [UInt8] {
        var writer = JSONWriter()
        writer.value(self)
        return writer.bytes
    }

    /// `bytes` indented two spaces a level, one member or item a line, `"key" : value`: for files
    /// and output people read, laid out as Foundation's `.prettyPrinted` lays them out.
    public var prettyBytes: [UInt8] {
        var bytes: [UInt8] = []
        writePretty(into: &bytes, level: 0)
        bytes.append(UInt8(ascii: "\n"))
        return bytes
    }

    private func writePretty(into bytes: inout [UInt8], level: Int) {
        func newline(_ level: Int) { bytes.append(UInt8(ascii: "\n")); bytes.append(contentsOf: repeatElement(UInt8(ascii: " "), count: 2 * level)) }
        switch self {
        case .array(let items) where !items.isEmpty:
            bytes.append(UInt8(ascii: "["))
            for (index, item) in items.enumerated() {
                if index > 0 { bytes.append(UInt8(ascii: ",")) }
                newline(level + 1)
                item.writePretty(into: &bytes, level: level + 1)
            }
            newline(level)
            bytes.append(UInt8(ascii: "]"))
        case .object(let members) where !members.isEmpty:
            bytes.append(UInt8(ascii: "{"))
            for (index, name) in members.keys.sorted().enumerated() {
                if index > 0 { bytes.append(UInt8(ascii: ",")) }
                newline(level + 1)
                JSONWriter.appendString(name, to: &bytes)
                bytes.append(contentsOf: " : ".utf8)
                members[name]!.writePretty(into: &bytes, level: level + 1)
            }
            newline(level)
            bytes.append(UInt8(ascii: "}"))
        default:
            bytes.append(contentsOf: self.bytes)
        }
    }

    /// The JSON type's name, for error messages ("must be a string, not a number").
    public var typeName: String {
        switch self {
        case .null: "null"
        case .bool: "a boolean"
        case .int, .double: "a number"
        case .string: "a string"
        case .array: "an array"
        case .object: "an object"
        }
    }

    // Typed reads, nil when the value is of another type: what frame and body readers use.
    public var stringValue: String? { if case .string(let value) = self { value } else { nil } }
    public var intValue: Int? { if case .int(let value) = self { value } else { nil } }
    public var boolValue: Bool? { if case .bool(let value) = self { value } else { nil } }
    public var arrayValue: [JSONValue]? { if case .array(let value) = self { value } else { nil } }
    public var objectValue: [String: JSONValue]? { if case .object(let value) = self { value } else { nil } }

    /// A member of an object; nil for a missing member and for any other type.
    public subscript(key: String) -> JSONValue? {
        if case .object(let members) = self { members[key] } else { nil }
    }
}

extension JSONValue: Codable {
    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if container.decodeNil() {
            self = .null
        } else if let value = try? container.decode(Bool.self) {
            self = .bool(value)
        } else if let value = try? container.decode(Int.self) {
            self = .int(value)
        } else if let value = try? container.decode(Double.self) {
            self = .double(value)
        } else if let value = try? container.decode(String.self) {
            self = .string(value)
        } else if let value = try? container.decode([JSONValue].self) {
            self = .array(value)
        } else {
            self = .object(try container.decode([String: JSONValue].self))
        }
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        switch self {
        case .null: try container.encodeNil()
        case .bool(let value): try container.encode(value)
        case .int(let value): try container.encode(value)
        case .double(let value): try container.encode(value)
        case .string(let value): try container.encode(value)
        case .array(let value): try container.encode(value)
        case .object(let value): try container.encode(value)
        }
    }
}

extension JSONValue: ExpressibleByStringLiteral, ExpressibleByIntegerLiteral, ExpressibleByBooleanLiteral,
    ExpressibleByArrayLiteral, ExpressibleByDictionaryLiteral, ExpressibleByFloatLiteral
{
    public init(stringLiteral value: String) { self = .string(value) }
    public init(integerLiteral value: Int) { self = .int(value) }
    public init(booleanLiteral value: Bool) { self = .bool(value) }
    public init(floatLiteral value: Double) { self = .double(value) }
    public init(arrayLiteral elements: JSONValue...) { self = .array(elements) }
    public init(dictionaryLiteral elements: (String, JSONValue)...) {
        self = .object(Dictionary(elements, uniquingKeysWith: { _, last in last }))
    }
}
