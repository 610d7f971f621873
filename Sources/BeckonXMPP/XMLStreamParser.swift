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

    public init(maximumStanzaBytes: Int = 64 * 1024) {
        self.maximumStanzaBytes = maximumStanzaBytes
    }

    /// Takes what arrived; returns the events it completes. After an error the stream is broken
    /// (RFC 6120 §4.9.3.1 `not-well-formed`): stop feeding it.
    public mutating func feed(_ bytes: some Sequence<UInt8>) throws(ParseError) -> [Event] {
        buffer.append(contentsOf: bytes)
        var events: [Event] = []
        var position = 0
        while position < buffer.count {
            if buffer[position] == UInt8(ascii: "<") {
                guard let end = Self.tagEnd(buffer, from: position) else { break }
                try handleTag(Array(buffer[(position + 1)..<end]), events: &events)
                stanzaBytes += end + 1 - position
                position = end + 1
            } else {
                let end = buffer[position...].firstIndex(of: UInt8(ascii: "<")) ?? buffer.count
                // Text may stop mid-entity or mid-character: wait for the rest unless a tag follows.
                guard end < buffer.count else { break }
                try handleText(Array(buffer[position..<end]))
                stanzaBytes += end - position
                position = end
            }
            if open.isEmpty {
                stanzaBytes = 0
            } else if stanzaBytes > maximumStanzaBytes {
                throw ParseError(description: "a stanza of more than \(maximumStanzaBytes) bytes")
            }
        }
        buffer.removeFirst(position)
        guard buffer.count <= maximumStanzaBytes else {
            throw ParseError(description: "more than \(maximumStanzaBytes) bytes without a complete tag")
        }
        return events
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
            let cdata = Array("![CDATA[".utf8)
            guard !open.isEmpty, inner.starts(with: cdata), inner.suffix(2) == [93, 93] else {
                throw ParseError(description: "a comment, DTD or misplaced CDATA (RFC 6120 §11.1)")
            }
            open[open.count - 1].element.text += String(decoding: inner[cdata.count..<(inner.count - 2)], as: UTF8.self)
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
                guard qualified.hasSuffix("stream") else { throw ParseError(description: "the stream must open with <stream:stream>") }
                rootOpened = true
                rootScope = Self.declarations(attributes)
                events.append(.streamOpened(XMPPElement(
                    name: "stream", namespace: rootScope[Self.prefix(of: qualified) ?? ""], attributes: attributes)))
                return
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
            attributes[key] = try decode(Array(bytes[start..<end]))
            index = end + 1
        }
        return (name, attributes)
    }

    /// Character data with the five predefined entities and character references decoded.
    static func decode(_ bytes: [UInt8]) throws(ParseError) -> String {
        guard bytes.contains(UInt8(ascii: "&")) else { return String(decoding: bytes, as: UTF8.self) }
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
            } else if entity.hasPrefix("#"),
                let code = entity.hasPrefix("#x") ? UInt32(entity.dropFirst(2), radix: 16) : UInt32(entity.dropFirst(), radix: 10),
                let scalar = Unicode.Scalar(code)
            {
                out += Array(String(Character(scalar)).utf8)
            } else {
                throw ParseError(description: "entity &\(entity); (only the predefined ones, RFC 6120 §11.1)")
            }
            index = semicolon + 1
        }
        return String(decoding: out, as: UTF8.self)
    }
}

extension String {
    fileprivate var trimmingWhitespace: String {
        var scalars = String.UnicodeScalarView(unicodeScalars.drop { $0.properties.isWhitespace })
        while let last = scalars.last, last.properties.isWhitespace { scalars.removeLast() }
        return String(scalars)
    }
}
