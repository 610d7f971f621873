/// The XML of one XMPP stream, as it arrives: bytes in, `Event`s out (the stream's opening tag,
/// each complete stanza, the stream's end). A value type with pure transitions, so the component
/// handler that drives it stays thin and the parser is tested without sockets.
///
/// An XMPP stream is one never-ending XML document, so a document parser cannot be used. What
/// RFC 6120 §11.1 forbids in a stream is refused here too: comments, processing instructions
/// (but the XML declaration first), DTDs, and entity references other than the five predefined
/// ones and character references. A stanza larger than `maximumStanzaBytes` is an error, so a
/// peer cannot make the buffer grow without bound.
public struct XMLStreamParser: Sendable {
    public enum Event: Hashable, Sendable {
        /// The root `<stream:stream …>` opened, with its attributes (`id`, `from`, …).
        case streamOpened(XMPPElement)
        case stanza(XMPPElement)
        case streamClosed
    }

    public struct ParseError: Error, Hashable, Sendable, CustomStringConvertible {
        public var description: String
    }

    public let maximumStanzaBytes: Int
    private var buffer: [UInt8] = []
    /// Open elements below the root: the stanza being built, and its open descendants.
    private var open: [(element: XMPPElement, qualified: String, prefixes: [String: String])] = []
    /// Namespace prefixes and the default namespace the root declared.
    private var rootScope: [String: String] = [:]
    private var rootOpened = false
    /// Bytes of the current stanza so far.
    private var stanzaBytes = 0

    /// How deep elements may nest in a stanza: real ones are a handful deep (a publish is 7), and
    /// the tree is walked recursively.
    public let maximumDepth: Int

    public init(maximumStanzaBytes: Int = 64 * 1024, maximumDepth: Int = 32) {
        self.maximumStanzaBytes = maximumStanzaBytes
        self.maximumDepth = maximumDepth
    }

    private static let cdataStart = Array("<![CDATA[".utf8), cdataEnd = Array("]]>".utf8)

    /// Takes what arrived; returns the events it completes. After an error the stream is broken
    /// (RFC 6120 §4.9.3.1 `not-well-formed`): stop feeding it.
    public mutating func feed(_ bytes: some Sequence<UInt8>) throws(ParseError) -> [Event] {
        buffer.append(contentsOf: bytes)
        var events: [Event] = []
        var position = 0
        while position < buffer.count {
            if buffer[position] == UInt8(ascii: "<"), position + 1 < buffer.count, buffer[position + 1] == UInt8(ascii: "!") {
                // `<!`: CDATA runs to `]]>` whatever it holds (quotes and `>` included); comments
                // and DTDs are refused (RFC 6120 §11.1) as soon as they can be told apart.
                let available = buffer[position...].prefix(Self.cdataStart.count)
                guard Self.cdataStart.starts(with: available) else {
                    throw ParseError(description: "a comment or DTD (RFC 6120 §11.1)")
                }
                guard available.count == Self.cdataStart.count else { break }
                let body = position + Self.cdataStart.count
                guard let end = Self.find(Self.cdataEnd, in: buffer, from: body) else { break }
                guard !open.isEmpty else { throw ParseError(description: "CDATA outside a stanza") }
                open[open.count - 1].element.text += try Self.checkedText(Array(buffer[body..<end]))
                stanzaBytes += end + Self.cdataEnd.count - position
                position = end + Self.cdataEnd.count
            } else if buffer[position] == UInt8(ascii: "<") {
                guard let end = Self.tagEnd(buffer, from: position) else { break }
                let inStanza = !open.isEmpty, before = events.count
                try handleTag(Array(buffer[(position + 1)..<end]), events: &events)
                // The stream's own tags are not a stanza's bytes; a stanza's first and last are.
                if inStanza || !open.isEmpty || (events.count > before && { if case .stanza = events[before] { true } else { false } }()) {
                    stanzaBytes += end + 1 - position
                }
                position = end + 1
            } else {
                let end = buffer[position...].firstIndex(of: UInt8(ascii: "<")) ?? buffer.count
                // Text may stop mid-entity or mid-character: wait for the rest unless a tag follows.
                guard end < buffer.count else { break }
                try handleText(Array(buffer[position..<end]))
                if !open.isEmpty { stanzaBytes += end - position }
                position = end
            }
            // Counted with the tag that ends the stanza, before the count starts over.
            if stanzaBytes > maximumStanzaBytes {
                throw ParseError(description: "a stanza of more than \(maximumStanzaBytes) bytes")
            }
            if open.isEmpty { stanzaBytes = 0 }
        }
        buffer.removeFirst(position)
        guard buffer.count <= maximumStanzaBytes else {
            throw ParseError(description: "more than \(maximumStanzaBytes) bytes without a complete tag")
        }
        return events
    }

    private static func find(_ needle: [UInt8], in bytes: [UInt8], from start: Int) -> Int? {
        guard bytes.count >= needle.count else { return nil }
        var index = start
        while index + needle.count <= bytes.count {
            if bytes[index] == needle[0], Array(bytes[index..<(index + needle.count)]) == needle { return index }
            index += 1
        }
        return nil
    }

    /// Character data as text, refusing the control characters XML does not allow (only tab,
    /// line feed and carriage return are).
    static func checkedText(_ bytes: [UInt8]) throws(ParseError) -> String {
        if let bad = bytes.first(where: { $0 < 0x20 && $0 != 0x09 && $0 != 0x0A && $0 != 0x0D }) {
            throw ParseError(description: "control character 0x\(String(bad, radix: 16)) in character data")
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// The `>` that ends the tag starting at `start`, outside quoted attribute values.
    private static func tagEnd(_ bytes: [UInt8], from start: Int) -> Int? {
        var quote: UInt8?
        var index = start + 1
        while index < bytes.count {
            let byte = bytes[index]
            if let open = quote {
                if byte == open { quote = nil }
            } else if byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "'") {
                quote = byte
            } else if byte == UInt8(ascii: ">") {
                return index
            }
            index += 1
        }
        return nil
    }

    private mutating func handleText(_ bytes: [UInt8]) throws(ParseError) {
        guard !open.isEmpty else {
            // Between stanzas only whitespace (keep-alives are a single space).
            guard bytes.allSatisfy({ [0x20, 0x09, 0x0A, 0x0D].contains($0) }) else {
                throw ParseError(description: "text outside a stanza")
            }
            return
        }
        open[open.count - 1].element.text += try Self.decode(bytes)
    }

    private mutating func handleTag(_ inner: [UInt8], events: inout [Event]) throws(ParseError) {
        guard let first = inner.first else { throw ParseError(description: "an empty tag") }
        switch first {
        case UInt8(ascii: "?"):
            // The XML declaration, before the root only.
            guard !rootOpened, inner.starts(with: Array("?xml".utf8)) else {
                throw ParseError(description: "a processing instruction (RFC 6120 §11.1)")
            }
        case UInt8(ascii: "!"):
            // `feed` takes CDATA whole before a tag is looked for; anything else is refused.
            throw ParseError(description: "a comment or DTD (RFC 6120 §11.1)")
        case UInt8(ascii: "/"):
            let name = String(decoding: inner.dropFirst(), as: UTF8.self).trimmingWhitespace
            if open.isEmpty {
                guard rootOpened, name == "stream:stream" || name == "stream" else {
                    throw ParseError(description: "a closing tag </\(name)> with nothing open")
                }
                events.append(.streamClosed)
                return
            }
            guard open[open.count - 1].qualified == name else {
                throw ParseError(description: "</\(name)> closes <\(open[open.count - 1].qualified)>")
            }
            close(into: &events)
        default:
            let selfClosing = inner.last == UInt8(ascii: "/")
            let (qualified, attributes) = try Self.parseTag(selfClosing ? Array(inner.dropLast()) : inner)
            if !rootOpened {
                let scope = Self.declarations(attributes)
                let prefix = Self.prefix(of: qualified)
                guard !selfClosing, qualified == (prefix.map { "\($0):stream" } ?? "stream"),
                    scope[prefix ?? ""] == "http://etherx.jabber.org/streams"
                else { throw ParseError(description: "the stream must open with <stream:stream> in the streams namespace") }
                rootOpened = true
                rootScope = scope
                events.append(.streamOpened(XMPPElement(
                    name: "stream", namespace: rootScope[Self.prefix(of: qualified) ?? ""], attributes: attributes)))
                return
            }
            guard open.count < maximumDepth else {
                throw ParseError(description: "elements nested more than \(maximumDepth) deep")
            }
            var scope = open.last?.prefixes ?? rootScope
            scope.merge(Self.declarations(attributes)) { $1 }
            let prefix = Self.prefix(of: qualified)
            let local = prefix.map { String(qualified.dropFirst($0.count + 1)) } ?? qualified
            if let prefix, scope[prefix] == nil {
                throw ParseError(description: "the prefix of <\(qualified)> is not declared")
            }
            let element = XMPPElement(name: local, namespace: scope[prefix ?? ""], attributes: attributes)
            open.append((element, qualified, scope))
            if selfClosing { close(into: &events) }
        }
    }

    /// Ends the innermost open element: into its parent, or out as a stanza.
    private mutating func close(into events: inout [Event]) {
        let finished = open.removeLast().element
        if open.isEmpty {
            events.append(.stanza(finished))
        } else {
            open[open.count - 1].element.children.append(finished)
        }
    }

    private static func prefix(of qualified: String) -> String? {
        qualified.firstIndex(of: ":").map { String(qualified[..<$0]) }
    }

    /// `xmlns` → "" and `xmlns:p` → "p", with their values.
    private static func declarations(_ attributes: [String: String]) -> [String: String] {
        var scope: [String: String] = [:]
        for (key, value) in attributes where key == "xmlns" || key.hasPrefix("xmlns:") {
            scope[key == "xmlns" ? "" : String(key.dropFirst("xmlns:".count))] = value
        }
        return scope
    }

    /// `name a='1' b="2"` → ("name", [a: 1, b: 2]).
    private static func parseTag(_ bytes: [UInt8]) throws(ParseError) -> (String, [String: String]) {
        var index = 0
        func skipSpace() { while index < bytes.count, [0x20, 0x09, 0x0A, 0x0D].contains(bytes[index]) { index += 1 } }
        func token() -> String {
            let start = index
            while index < bytes.count, ![0x20, 0x09, 0x0A, 0x0D, UInt8(ascii: "=")].contains(bytes[index]) { index += 1 }
            return String(decoding: bytes[start..<index], as: UTF8.self)
        }
        let name = token()
        guard !name.isEmpty else { throw ParseError(description: "a tag without a name") }
        var attributes: [String: String] = [:]
        while true {
            skipSpace()
            guard index < bytes.count else { break }
            let key = token()
            skipSpace()
            guard !key.isEmpty, index < bytes.count, bytes[index] == UInt8(ascii: "=") else {
                throw ParseError(description: "attribute \(key) of <\(name)> has no value")
            }
            index += 1
            skipSpace()
            guard index < bytes.count, bytes[index] == UInt8(ascii: "'") || bytes[index] == UInt8(ascii: "\"") else {
                throw ParseError(description: "attribute \(key) of <\(name)> is not quoted")
            }
            let quote = bytes[index]
            let start = index + 1
            guard let end = bytes[start...].firstIndex(of: quote) else { throw ParseError(description: "an unclosed quote") }
            guard attributes[key] == nil else { throw ParseError(description: "attribute \(key) twice in <\(name)>") }
            let value = Array(bytes[start..<end])
            guard !value.contains(UInt8(ascii: "<")) else { throw ParseError(description: "'<' in attribute \(key) of <\(name)>") }
            attributes[key] = try decode(value)
            index = end + 1
            guard index == bytes.count || [0x20, 0x09, 0x0A, 0x0D].contains(bytes[index]) else {
                throw ParseError(description: "no space after attribute \(key) of <\(name)>")
            }
        }
        return (name, attributes)
    }

    /// Character data with the five predefined entities and character references decoded.
    static func decode(_ bytes: [UInt8]) throws(ParseError) -> String {
        guard bytes.contains(UInt8(ascii: "&")) else { return try checkedText(bytes) }
        _ = try checkedText(bytes)
        var out: [UInt8] = []
        var index = 0
        while index < bytes.count {
            guard bytes[index] == UInt8(ascii: "&") else {
                out.append(bytes[index])
                index += 1
                continue
            }
            guard let semicolon = bytes[index...].firstIndex(of: UInt8(ascii: ";")), semicolon - index <= 10 else {
                throw ParseError(description: "an unterminated entity reference")
            }
            let entity = String(decoding: bytes[(index + 1)..<semicolon], as: UTF8.self)
            let named = ["lt": "<", "gt": ">", "amp": "&", "quot": "\"", "apos": "'"]
            if let value = named[entity] {
                out += Array(value.utf8)
            } else if entity.hasPrefix("#"), let code = Self.characterReference(entity), let scalar = Unicode.Scalar(code) {
                out += Array(String(Character(scalar)).utf8)
            } else {
                throw ParseError(description: "entity &\(entity); (only the predefined ones, RFC 6120 §11.1)")
            }
            index = semicolon + 1
        }
        return String(decoding: out, as: UTF8.self)
    }
}

extension XMLStreamParser {
    /// `#65` or `#x41` as a code point XML allows (a digit after `#` or `#x`, no sign; not a
    /// control character but tab, line feed and carriage return; no surrogate, no U+FFFE/FFFF).
    static func characterReference(_ entity: String) -> UInt32? {
        let hex = entity.hasPrefix("#x")
        let digits = entity.dropFirst(hex ? 2 : 1)
        guard !digits.isEmpty, digits.allSatisfy({ hex ? $0.isHexDigit : $0.isASCII && $0.isNumber }),
            let code = UInt32(digits, radix: hex ? 16 : 10)
        else { return nil }
        switch code {
        case 0x9, 0xA, 0xD, 0x20...0xD7FF, 0xE000...0xFFFD, 0x10000...0x10FFFF: return code
        default: return nil
        }
    }
}

extension String {
    fileprivate var trimmingWhitespace: String {
        var scalars = String.UnicodeScalarView(unicodeScalars.drop { $0.properties.isWhitespace })
        while let last = scalars.last, last.properties.isWhitespace { scalars.removeLast() }
        return String(scalars)
    }
}
