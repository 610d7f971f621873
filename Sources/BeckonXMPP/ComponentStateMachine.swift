import Crypto

/// An external component's side of an XMPP stream (XEP-0114): open the stream, answer the
/// server's stream id with the handshake, then take stanzas. Pure transitions: bytes and events
/// in, actions out; `XMPPComponentHandler` in BeckonServer does the I/O.
public struct ComponentStateMachine: Sendable {
    public enum State: Sendable, Equatable {
        case idle, awaitingStream, awaitingHandshake, ready, closed
    }

    public enum Action: Sendable, Equatable {
        /// Write this text to the server.
        case send(String)
        /// The handshake was accepted: publishes may come.
        case ready
        /// An XEP-0357 publish to answer (with `PushPublish.result` or `.error`).
        case publish(PushPublish)
        /// The stream is over (the server's stream error, a close, bad XML): close the connection.
        case fail(String)
    }

    public static let streamNamespace = "http://etherx.jabber.org/streams"
    public static let componentNamespace = "jabber:component:accept"

    public let jid: String
    private let secret: String
    private var parser: XMLStreamParser
    public private(set) var state: State = .idle

    public init(jid: String, secret: String, maximumStanzaBytes: Int = 64 * 1024) {
        self.jid = jid
        self.secret = secret
        self.parser = XMLStreamParser(maximumStanzaBytes: maximumStanzaBytes)
    }

    /// The connection is open: the component speaks first (XEP-0114 §3).
    public mutating func connected() -> [Action] {
        state = .awaitingStream
        let header = "<stream:stream xmlns='\(Self.componentNamespace)' xmlns:stream='\(Self.streamNamespace)' "
            + "to='\(XMPPElement.escape(jid))'>"
        return [.send(header)]
    }

    public mutating func received(_ bytes: some Sequence<UInt8>) -> [Action] {
        guard state != .closed, state != .idle else { return [] }
        let events: [XMLStreamParser.Event]
        do {
            events = try parser.feed(bytes)
        } catch {
            return fail("not-well-formed: \(error.description)", stanza: "<stream:error><not-well-formed xmlns='urn:ietf:params:xml:ns:xmpp-streams'/></stream:error>")
        }
        var actions: [Action] = []
        for event in events where state != .closed {
            actions += handle(event)
        }
        return actions
    }

    /// The handshake: lowercase hex SHA-1 of the stream id followed by the shared secret (XEP-0114 §3).
    public static func handshake(streamID: String, secret: String) -> String {
        Insecure.SHA1.hash(data: Array((streamID + secret).utf8)).map { hex($0) }.joined()
    }

    private static func hex(_ byte: UInt8) -> String {
        let digits = Array("0123456789abcdef")
        return String([digits[Int(byte >> 4)], digits[Int(byte & 0x0F)]])
    }

    private mutating func handle(_ event: XMLStreamParser.Event) -> [Action] {
        switch (state, event) {
        case (.awaitingStream, .streamOpened(let root)):
            guard let id = root["id"], !id.isEmpty else { return fail("the server's stream header has no id") }
            state = .awaitingHandshake
            return [.send("<handshake>\(Self.handshake(streamID: id, secret: secret))</handshake>")]
        case (_, .streamClosed):
            return fail("the server closed the stream")
        case (_, .stanza(let stanza)) where stanza.name == "error" && stanza.namespace == Self.streamNamespace:
            let condition = stanza.children.first { $0.name != "text" }?.name ?? "undefined-condition"
            return fail("stream error: \(condition)")
        case (.awaitingHandshake, .stanza(let stanza)) where stanza.name == "handshake":
            state = .ready
            return [.ready]
        case (.ready, .stanza(let stanza)):
            if let publish = PushPublish(stanza) { return [.publish(publish)] }
            // Any other request gets an error, as RFC 6120 §8.4 asks; results and errors, and
            // messages and presences, need no answer.
            if stanza.name == "iq", let type = stanza["type"], type == "get" || type == "set", let id = stanza["id"] {
                var attributes = ["type": "error", "id": id, "from": jid]
                attributes["to"] = stanza["from"]
                let error = XMPPElement(name: "error", attributes: ["type": "cancel"], children: [
                    XMPPElement(name: "service-unavailable", namespace: "urn:ietf:params:xml:ns:xmpp-stanzas"),
                ])
                return [.send(XMPPElement(name: "iq", namespace: Self.componentNamespace, attributes: attributes, children: [error])
                    .xml(inherited: Self.componentNamespace))]
            }
            return []
        default:
            return fail("unexpected in state \(state): \(event)")
        }
    }

    private mutating func fail(_ reason: String, stanza: String? = nil) -> [Action] {
        state = .closed
        return (stanza.map { [Action.send($0 + "</stream:stream>")] } ?? [.send("</stream:stream>")]) + [.fail(reason)]
    }
}
