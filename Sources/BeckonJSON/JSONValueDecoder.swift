#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Decodes a `Decodable` value from JSON read by `JSONParser`: Beckon's one way from JSON bytes to
/// a typed value, so every reader refuses the same malformed input and the same nesting.
///
/// A drop-in for `Foundation.JSONDecoder` with its default strategies: dates as seconds since the
/// reference date (`Date`'s own `Decodable`), `Data` as Base64, `URL` as its absolute string,
/// `Decimal` as a number. What `JSONStreamEncoder` writes decodes to an equal value. A number
/// decodes as any numeric type that holds it exactly; `3.5` as an `Int` is an error, as in Foundation.
/// Unlike Foundation, an integer beyond `Int`'s range (which the parser holds as a `Double`) is
/// refused as a `UInt64` rather than rounded: nothing Beckon stores goes that high.
public struct JSONValueDecoder: Sendable {
    public init() {}

    public func decode<T: Decodable>(_ type: T.Type, from bytes: some Collection<UInt8>) throws -> T {
        try decode(type, from: try JSONParser.parse(bytes))
    }

    public func decode<T: Decodable>(_ type: T.Type, from value: JSONValue) throws -> T {
        try ValueDecoder(value: value, codingPath: []).unbox(type)
    }
}

private struct ValueDecoder: Decoder {
    let value: JSONValue
    let codingPath: [any CodingKey]
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    func container<Key: CodingKey>(keyedBy type: Key.Type) throws -> KeyedDecodingContainer<Key> {
        guard case .object(let members) = value else { throw mismatch([String: JSONValue].self) }
        return KeyedDecodingContainer(KeyedContainer<Key>(members: members, codingPath: codingPath))
    }

    func unkeyedContainer() throws -> any UnkeyedDecodingContainer {
        guard case .array(let items) = value else { throw mismatch([JSONValue].self) }
        return UnkeyedContainer(items: items, codingPath: codingPath)
    }

    func singleValueContainer() throws -> any SingleValueDecodingContainer { SingleValueContainer(decoder: self) }

    func mismatch(_ expected: Any.Type) -> DecodingError {
        let found = value == .null ? "null" : value.typeName
        return .typeMismatch(expected, .init(codingPath: codingPath, debugDescription: "Expected \(expected) but found \(found)."))
    }

    /// The value as `T`: the types JSONDecoder treats specially first, then `T`'s own `init(from:)`.
    func unbox<T: Decodable>(_ type: T.Type) throws -> T {
        if T.self == String.self { return try string() as! T }
        if T.self == Bool.self { return try bool() as! T }
        if T.self == Int.self { return try integer(Int.self) as! T }
        if T.self == Int64.self { return try integer(Int64.self) as! T }
        if T.self == Double.self { return try double() as! T }
        if T.self == Data.self {
            guard let data = Data(base64Encoded: try string()) else {
                throw DecodingError.dataCorrupted(.init(codingPath: codingPath, debugDescription: "Encountered Data is not valid Base64."))
            }
            return data as! T
        }
        if T.self == URL.self {
            guard let url = URL(string: try string()) else {
                throw DecodingError.dataCorrupted(.init(codingPath: codingPath, debugDescription: "Invalid URL string."))
            }
            return url as! T
        }
        if T.self == Decimal.self {
            switch value {
            case .int(let number): return Decimal(number) as! T
            // Through the double's shortest text, so `-12.345` is that decimal and not the double's expansion.
            case .double(let number): if let decimal = Decimal(string: "\(number)") { return decimal as! T }
            default: break
            }
            throw mismatch(Decimal.self)
        }
        if T.self == JSONValue.self { return value as! T }
        return try T(from: self)
    }

    func string() throws -> String {
        guard case .string(let text) = value else { throw mismatch(String.self) }
        return text
    }

    func bool() throws -> Bool {
        guard case .bool(let flag) = value else { throw mismatch(Bool.self) }
        return flag
    }

    func double() throws -> Double {
        switch value {
        case .int(let number): return Double(number)
        case .double(let number): return number
        default: throw mismatch(Double.self)
        }
    }

    func integer<I: FixedWidthInteger>(_ type: I.Type) throws -> I {
        let exact: I? =
            switch value {
            case .int(let number): I(exactly: number)
            // The parser keeps a number as a double when it is not an exact `Int` (a large UInt64).
            case .double(let number): I(exactly: number)
            default: throw mismatch(I.self)
            }
        guard let exact else {
            throw DecodingError.dataCorrupted(.init(codingPath: codingPath, debugDescription: "Number does not fit in \(I.self)."))
        }
        return exact
    }
}

private struct KeyedContainer<Key: CodingKey>: KeyedDecodingContainerProtocol {
    let members: [String: JSONValue]
    let codingPath: [any CodingKey]

    var allKeys: [Key] { members.keys.compactMap { Key(stringValue: $0) } }
    func contains(_ key: Key) -> Bool { members[key.stringValue] != nil }

    private func decoder(_ key: Key) throws -> ValueDecoder {
        guard let value = members[key.stringValue] else {
            throw DecodingError.keyNotFound(key, .init(codingPath: codingPath, debugDescription: "No value for key \"\(key.stringValue)\"."))
        }
        return ValueDecoder(value: value, codingPath: codingPath + [key])
    }

    func decodeNil(forKey key: Key) throws -> Bool { try decoder(key).value == .null }
    func decode<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T { try decoder(key).unbox(type) }
    func decode(_ type: Bool.Type, forKey key: Key) throws -> Bool { try decoder(key).bool() }
    func decode(_ type: String.Type, forKey key: Key) throws -> String { try decoder(key).string() }
    func decode(_ type: Double.Type, forKey key: Key) throws -> Double { try decoder(key).double() }
    func decode(_ type: Float.Type, forKey key: Key) throws -> Float { Float(try decoder(key).double()) }
    func decode(_ type: Int.Type, forKey key: Key) throws -> Int { try decoder(key).integer(type) }
    func decode(_ type: Int8.Type, forKey key: Key) throws -> Int8 { try decoder(key).integer(type) }
    func decode(_ type: Int16.Type, forKey key: Key) throws -> Int16 { try decoder(key).integer(type) }
    func decode(_ type: Int32.Type, forKey key: Key) throws -> Int32 { try decoder(key).integer(type) }
    func decode(_ type: Int64.Type, forKey key: Key) throws -> Int64 { try decoder(key).integer(type) }
    func decode(_ type: UInt.Type, forKey key: Key) throws -> UInt { try decoder(key).integer(type) }
    func decode(_ type: UInt8.Type, forKey key: Key) throws -> UInt8 { try decoder(key).integer(type) }
    func decode(_ type: UInt16.Type, forKey key: Key) throws -> UInt16 { try decoder(key).integer(type) }
    func decode(_ type: UInt32.Type, forKey key: Key) throws -> UInt32 { try decoder(key).integer(type) }
    func decode(_ type: UInt64.Type, forKey key: Key) throws -> UInt64 { try decoder(key).integer(type) }

    // A missing or null member is nil, as in JSONDecoder.
    func decodeIfPresent<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T? {
        guard let value = members[key.stringValue], value != .null else { return nil }
        return try ValueDecoder(value: value, codingPath: codingPath + [key]).unbox(type)
    }

    func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type, forKey key: Key) throws -> KeyedDecodingContainer<NestedKey> {
        try decoder(key).container(keyedBy: type)
    }

    func nestedUnkeyedContainer(forKey key: Key) throws -> any UnkeyedDecodingContainer { try decoder(key).unkeyedContainer() }

    func superDecoder() throws -> any Decoder { superDecoder(CodingPathKey.super) }
    func superDecoder(forKey key: Key) throws -> any Decoder { superDecoder(key) }
    private func superDecoder(_ key: some CodingKey) -> any Decoder {
        ValueDecoder(value: members[key.stringValue] ?? .null, codingPath: codingPath + [key])
    }
}

private struct UnkeyedContainer: UnkeyedDecodingContainer {
    let items: [JSONValue]
    let codingPath: [any CodingKey]
    private(set) var currentIndex = 0

    init(items: [JSONValue], codingPath: [any CodingKey]) {
        self.items = items
        self.codingPath = codingPath
    }

    var count: Int? { items.count }
    var isAtEnd: Bool { currentIndex >= items.count }

    private mutating func next(_ type: Any.Type) throws -> ValueDecoder {
        let path = codingPath + [CodingPathKey.index(currentIndex)]
        guard !isAtEnd else {
            throw DecodingError.valueNotFound(type, .init(codingPath: path, debugDescription: "Unkeyed container is at end."))
        }
        defer { currentIndex += 1 }
        return ValueDecoder(value: items[currentIndex], codingPath: path)
    }

    mutating func decodeNil() throws -> Bool {
        guard !isAtEnd, items[currentIndex] == .null else { return false }
        currentIndex += 1
        return true
    }

    mutating func decode<T: Decodable>(_ type: T.Type) throws -> T { try next(type).unbox(type) }
    mutating func decode(_ type: Bool.Type) throws -> Bool { try next(type).bool() }
    mutating func decode(_ type: String.Type) throws -> String { try next(type).string() }
    mutating func decode(_ type: Double.Type) throws -> Double { try next(type).double() }
    mutating func decode(_ type: Float.Type) throws -> Float { Float(try next(type).double()) }
    mutating func decode(_ type: Int.Type) throws -> Int { try next(type).integer(type) }
    mutating func decode(_ type: Int8.Type) throws -> Int8 { try next(type).integer(type) }
    mutating func decode(_ type: Int16.Type) throws -> Int16 { try next(type).integer(type) }
    mutating func decode(_ type: Int32.Type) throws -> Int32 { try next(type).integer(type) }
    mutating func decode(_ type: Int64.Type) throws -> Int64 { try next(type).integer(type) }
    mutating func decode(_ type: UInt.Type) throws -> UInt { try next(type).integer(type) }
    mutating func decode(_ type: UInt8.Type) throws -> UInt8 { try next(type).integer(type) }
    mutating func decode(_ type: UInt16.Type) throws -> UInt16 { try next(type).integer(type) }
    mutating func decode(_ type: UInt32.Type) throws -> UInt32 { try next(type).integer(type) }
    mutating func decode(_ type: UInt64.Type) throws -> UInt64 { try next(type).integer(type) }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type) throws -> KeyedDecodingContainer<NestedKey> {
        try next(KeyedDecodingContainer<NestedKey>.self).container(keyedBy: type)
    }

    mutating func nestedUnkeyedContainer() throws -> any UnkeyedDecodingContainer {
        try next((any UnkeyedDecodingContainer).self).unkeyedContainer()
    }

    mutating func superDecoder() throws -> any Decoder { try next((any Decoder).self) }
}

private struct SingleValueContainer: SingleValueDecodingContainer {
    let decoder: ValueDecoder
    var codingPath: [any CodingKey] { decoder.codingPath }

    func decodeNil() -> Bool { decoder.value == .null }
    func decode<T: Decodable>(_ type: T.Type) throws -> T { try decoder.unbox(type) }
    func decode(_ type: Bool.Type) throws -> Bool { try decoder.bool() }
    func decode(_ type: String.Type) throws -> String { try decoder.string() }
    func decode(_ type: Double.Type) throws -> Double { try decoder.double() }
    func decode(_ type: Float.Type) throws -> Float { Float(try decoder.double()) }
    func decode(_ type: Int.Type) throws -> Int { try decoder.integer(type) }
    func decode(_ type: Int8.Type) throws -> Int8 { try decoder.integer(type) }
    func decode(_ type: Int16.Type) throws -> Int16 { try decoder.integer(type) }
    func decode(_ type: Int32.Type) throws -> Int32 { try decoder.integer(type) }
    func decode(_ type: Int64.Type) throws -> Int64 { try decoder.integer(type) }
    func decode(_ type: UInt.Type) throws -> UInt { try decoder.integer(type) }
    func decode(_ type: UInt8.Type) throws -> UInt8 { try decoder.integer(type) }
    func decode(_ type: UInt16.Type) throws -> UInt16 { try decoder.integer(type) }
    func decode(_ type: UInt32.Type) throws -> UInt32 { try decoder.integer(type) }
    func decode(_ type: UInt64.Type) throws -> UInt64 { try decoder.integer(type) }
}
