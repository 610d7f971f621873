/// A strict RFC 8259 parser from bytes to `JSONValue`: request bodies, sync frames, control API.
///
/// Why not `JSONDecoder`: decoding an untyped value through `Decodable` means guessing each
/// value's type by trying them in turn, every miss costing a thrown error; in profiles of
/// `POST /v1/messages` that was the largest single cost. This reads each byte once, keeps
/// integers apart from other numbers (`int` when exact), and refuses what JSON refuses:
/// trailing commas, comments, leading zeros, unescaped control characters, lone surrogates.
public struct JSONParser {
    /// Deeper nesting is refused: it would only serve to exhaust the stack.
    public static let maximumDepth = 64

    public struct Failure: Error, Equatable, CustomStringConvertible {
        public var offset: Int
        public var reason: String
        public var description: String { "\(reason) at byte \(offset)" }
    }

    private let bytes: [UInt8]
    private var index = 0

    public static func parse(_ bytes: some Collection<UInt8>) throws(Failure) -> JSONValue {
        var parser = JSONParser(bytes: Array(bytes))
        parser.skipWhitespace()
        let value = try parser.value(depth: 0)
        parser.skipWhitespace()
        guard parser.index == parser.bytes.count else { throw parser.failure("unexpected data after the value") }
        return value
    }

    private init(bytes: [UInt8]) {
        self.bytes = bytes
    }

    private func failure(_ reason: String) -> Failure { Failure(offset: index, reason: reason) }

    private var current: UInt8? { index < bytes.count ? bytes[index] : nil }

    private mutating func skipWhitespace() {
        while let byte = current, byte == 0x20 || byte == 0x0A || byte == 0x0D || byte == 0x09 { index += 1 }
    }

    private mutating func expect(_ literal: String, _ value: JSONValue) throws(Failure) -> JSONValue {
        let expected = literal.utf8
        guard index + expected.count <= bytes.count, bytes[index..<(index + expected.count)].elementsEqual(expected) else {
            throw failure("invalid literal")
        }
        index += expected.count
        return value
    }

    private mutating func value(depth: Int) throws(Failure) -> JSONValue {
        guard depth < Self.maximumDepth else { throw failure("nested more than \(Self.maximumDepth) deep") }
        switch current {
        case UInt8(ascii: "{"): return try object(depth: depth)
        case UInt8(ascii: "["): return try array(depth: depth)
        case UInt8(ascii: "\""): return .string(try string())
        case UInt8(ascii: "t"): return try expect("true", .bool(true))
        case UInt8(ascii: "f"): return try expect("false", .bool(false))
        case UInt8(ascii: "n"): return try expect("null", .null)
        case let byte? where byte == UInt8(ascii: "-") || (0x30...0x39).contains(byte): return try number()
        case nil: throw failure("unexpected end of input")
        default: throw failure("unexpected character")
        }
    }

    private mutating func object(depth: Int) throws(Failure) -> JSONValue {
        index += 1
        var members: [String: JSONValue] = [:]
        skipWhitespace()
        if current == UInt8(ascii: "}") {
            index += 1
            return .object(members)
        }
        while true {
            skipWhitespace()
            guard current == UInt8(ascii: "\"") else { throw failure("expected a member name") }
            let name = try string()
            skipWhitespace()
            guard current == UInt8(ascii: ":") else { throw failure("expected ':'") }
            index += 1
            skipWhitespace()
            // A repeated name keeps its last value, as most parsers do (RFC 8259 §4 leaves it open).
            members[name] = try value(depth: depth + 1)
            skipWhitespace()
            switch current {
            case UInt8(ascii: ","): index += 1
            case UInt8(ascii: "}"):
                index += 1
                return .object(members)
            default: throw failure("expected ',' or '}'")
            }
        }
    }

    private mutating func array(depth: Int) throws(Failure) -> JSONValue {
        index += 1
        var elements: [JSONValue] = []
        skipWhitespace()
        if current == UInt8(ascii: "]") {
            index += 1
            return .array(elements)
        }
        while true {
            skipWhitespace()
            elements.append(try value(depth: depth + 1))
            skipWhitespace()
            switch current {
            case UInt8(ascii: ","): index += 1
            case UInt8(ascii: "]"):
                index += 1
                return .array(elements)
            default: throw failure("expected ',' or ']'")
            }
        }
    }

    private mutating func string() throws(Failure) -> String {
        index += 1
        let start = index
        // Fast path: no escapes, so the bytes are the string (validated as UTF-8 below).
        while let byte = current, byte != UInt8(ascii: "\""), byte != UInt8(ascii: "\\") {
            guard byte >= 0x20 else { throw failure("unescaped control character in a string") }
            index += 1
        }
        var scalars = bytes[start..<index]
        guard current == UInt8(ascii: "\\") else {
            guard current != nil else { throw failure("unterminated string") }
            index += 1
            return try utf8(scalars, from: start)
        }
        var decoded = Array(scalars)
        while let byte = current {
            switch byte {
            case UInt8(ascii: "\""):
                index += 1
                scalars = decoded[...]
                return try utf8(scalars, from: start)
            case UInt8(ascii: "\\"):
                index += 1
                guard let escape = current else { throw failure("unterminated escape") }
                index += 1
                switch escape {
                case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): decoded.append(escape)
                case UInt8(ascii: "b"): decoded.append(0x08)
                case UInt8(ascii: "f"): decoded.append(0x0C)
                case UInt8(ascii: "n"): decoded.append(0x0A)
                case UInt8(ascii: "r"): decoded.append(0x0D)
                case UInt8(ascii: "t"): decoded.append(0x09)
                case UInt8(ascii: "u"): decoded.append(contentsOf: try unicodeEscape())
                default: throw failure("invalid escape")
                }
            case 0..<0x20:
                throw failure("unescaped control character in a string")
            default:
                decoded.append(byte)
                index += 1
            }
        }
        throw failure("unterminated string")
    }

    /// `\uXXXX`, with a following `\uXXXX` for a surrogate pair; as UTF-8 bytes.
    private mutating func unicodeEscape() throws(Failure) -> [UInt8] {
        var scalar = try hex4()
        if (0xD800...0xDBFF).contains(scalar) {
            guard current == UInt8(ascii: "\\"), index + 1 < bytes.count, bytes[index + 1] == UInt8(ascii: "u") else {
                throw failure("lone surrogate in \\u escape")
            }
            index += 2
            let low = try hex4()
            guard (0xDC00...0xDFFF).contains(low) else { throw failure("invalid surrogate pair") }
            scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
        } else if (0xDC00...0xDFFF).contains(scalar) {
            throw failure("lone surrogate in \\u escape")
        }
        return Array(String(Character(Unicode.Scalar(scalar)!)).utf8)
    }

    private mutating func hex4() throws(Failure) -> UInt32 {
        guard index + 4 <= bytes.count else { throw failure("short \\u escape") }
        var value: UInt32 = 0
        for _ in 0..<4 {
            let byte = bytes[index]
            let digit: UInt8
            switch byte {
            case 0x30...0x39: digit = byte - 0x30
            case 0x41...0x46: digit = byte - 0x41 + 10
            case 0x61...0x66: digit = byte - 0x61 + 10
            default: throw failure("invalid hex digit in \\u escape")
            }
            value = value << 4 | UInt32(digit)
            index += 1
        }
        return value
    }

    private func utf8(_ slice: ArraySlice<UInt8>, from start: Int) throws(Failure) -> String {
        guard let text = String(validating: slice, as: UTF8.self) else {
            throw Failure(offset: start, reason: "invalid UTF-8 in a string")
        }
        return text
    }

    private mutating func number() throws(Failure) -> JSONValue {
        let start = index
        if current == UInt8(ascii: "-") { index += 1 }
        guard let first = current, (0x30...0x39).contains(first) else { throw failure("invalid number") }
        index += 1
        if first == 0x30, let next = current, (0x30...0x39).contains(next) { throw failure("leading zero in a number") }
        skipDigits()
        var integral = true
        if current == UInt8(ascii: ".") {
            integral = false
            index += 1
            guard let digit = current, (0x30...0x39).contains(digit) else { throw failure("invalid number") }
            skipDigits()
        }
        if current == UInt8(ascii: "e") || current == UInt8(ascii: "E") {
            integral = false
            index += 1
            if current == UInt8(ascii: "+") || current == UInt8(ascii: "-") { index += 1 }
            guard let digit = current, (0x30...0x39).contains(digit) else { throw failure("invalid number") }
            skipDigits()
        }
        let text = String(decoding: bytes[start..<index], as: UTF8.self)
        if integral, let integer = Int(text) { return .int(integer) }
        guard let number = Double(text), number.isFinite else { throw Failure(offset: start, reason: "number out of range") }
        return .double(number)
    }

    private mutating func skipDigits() {
        while let byte = current, (0x30...0x39).contains(byte) { index += 1 }
    }
}
