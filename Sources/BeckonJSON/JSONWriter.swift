/// Writes compact JSON straight into bytes.
///
/// Object keys are written in the order given (custom dictionaries sorted), so a payload is
/// byte-for-byte reproducible and its size is known exactly before it is sent. Non-ASCII text is
/// written as UTF-8, never as `\u` escapes (Apple: "The JSON \U notation is not supported").
public struct JSONWriter {
    public private(set) var bytes: [UInt8] = []
    private var needsComma: [Bool] = []

    public init() { bytes.reserveCapacity(256) }

    public mutating func beginObject() { separate(); bytes.append(UInt8(ascii: "{")); needsComma.append(false) }
    public mutating func endObject() { needsComma.removeLast(); bytes.append(UInt8(ascii: "}")) }
    public mutating func beginArray() { separate(); bytes.append(UInt8(ascii: "[")); needsComma.append(false) }
    public mutating func endArray() { needsComma.removeLast(); bytes.append(UInt8(ascii: "]")) }

    public mutating func key(_ name: String) {
        separate()
        Self.appendString(name, to: &bytes)
        bytes.append(UInt8(ascii: ":"))
        // The value that follows must not write another comma.
        needsComma[needsComma.count - 1] = false
    }

    public mutating func string(_ value: String) { separate(); Self.appendString(value, to: &bytes) }
    public mutating func int(_ value: Int) { separate(); bytes.append(contentsOf: String(value).utf8) }
    public mutating func bool(_ value: Bool) { separate(); bytes.append(contentsOf: (value ? "true" : "false").utf8) }
    public mutating func null() { separate(); bytes.append(contentsOf: "null".utf8) }
    public mutating func double(_ value: Double) {
        separate()
        if value.isFinite, value == value.rounded(), abs(value) < 1e15 {
            bytes.append(contentsOf: String(Int(value)).utf8)
        } else if value.isFinite {
            bytes.append(contentsOf: String(value).utf8)
        } else {
            bytes.append(contentsOf: "null".utf8)  // JSON has no NaN or infinity.
        }
    }

    /// Splices bytes that already are one JSON value (a stored payload), unchecked.
    public mutating func raw(_ json: some Collection<UInt8>) { separate(); bytes.append(contentsOf: json) }

    public mutating func value(_ json: JSONValue) {
        switch json {
        case .null: null()
        case .bool(let value): bool(value)
        case .int(let value): int(value)
        case .double(let value): double(value)
        case .string(let value): string(value)
        case .array(let values):
            beginArray()
            for value in values { self.value(value) }
            endArray()
        case .object(let members):
            beginObject()
            for name in members.keys.sorted() {
                key(name)
                value(members[name]!)
            }
            endObject()
        }
    }

    // Convenience for optional members: absent values are simply not written.
    public mutating func member(_ name: String, _ value: String?) { if let value { key(name); string(value) } }
    public mutating func member(_ name: String, _ value: Int?) { if let value { key(name); int(value) } }
    public mutating func member(_ name: String, _ value: Bool?) { if let value { key(name); bool(value) } }
    public mutating func member(_ name: String, _ value: Double?) { if let value { key(name); double(value) } }
    public mutating func member(_ name: String, _ value: [String]?) {
        guard let value else { return }
        key(name)
        beginArray()
        for item in value { string(item) }
        endArray()
    }

    private mutating func separate() {
        guard let last = needsComma.last else { return }
        if last { bytes.append(UInt8(ascii: ",")) }
        needsComma[needsComma.count - 1] = true
    }

    /// The exact number of bytes `appendString` writes for `text`, quotes included.
    public static func encodedLength(of text: Substring) -> Int {
        var length = 2
        for byte in text.utf8 { length += escapedLength(byte) }
        return length
    }

    public static func escapedLength(_ byte: UInt8) -> Int {
        switch byte {
        case UInt8(ascii: "\""), UInt8(ascii: "\\"), 0x08, 0x0C, 0x0A, 0x0D, 0x09: 2
        case 0..<0x20: 6
        default: 1
        }
    }

    public static func appendString(_ text: String, to bytes: inout [UInt8]) {
        bytes.append(UInt8(ascii: "\""))
        // Most text needs no escapes: copy it in one go instead of byte by byte.
        let copied = text.utf8.withContiguousStorageIfAvailable { utf8 -> Bool in
            guard !utf8.contains(where: { $0 < 0x20 || $0 == UInt8(ascii: "\"") || $0 == UInt8(ascii: "\\") }) else { return false }
            bytes.append(contentsOf: utf8)
            return true
        }
        if copied == true {
            bytes.append(UInt8(ascii: "\""))
            return
        }
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "\""): bytes.append(contentsOf: [0x5C, 0x22])
            case UInt8(ascii: "\\"): bytes.append(contentsOf: [0x5C, 0x5C])
            case 0x0A: bytes.append(contentsOf: [0x5C, UInt8(ascii: "n")])
            case 0x0D: bytes.append(contentsOf: [0x5C, UInt8(ascii: "r")])
            case 0x09: bytes.append(contentsOf: [0x5C, UInt8(ascii: "t")])
            case 0x08: bytes.append(contentsOf: [0x5C, UInt8(ascii: "b")])
            case 0x0C: bytes.append(contentsOf: [0x5C, UInt8(ascii: "f")])
            case 0..<0x20:
                let hex = Array("0123456789abcdef".utf8)
                bytes.append(contentsOf: [0x5C, UInt8(ascii: "u"), 0x30, 0x30, hex[Int(byte >> 4)], hex[Int(byte & 0xF)]])
            default: bytes.append(byte)
            }
        }
        bytes.append(UInt8(ascii: "\""))
    }
}
