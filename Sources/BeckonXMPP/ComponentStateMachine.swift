import BeckonMarkup
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
    /// The id of the ping sent and not yet followed by anything from the server.
    private var unansweredPing: String?
    private var pingsSent = 0

    public init(jid: String, secret: String, maximumStanzaBytes: Int = 64 * 1024) {
        self.jid = jid
        self.secret = secret
        self.parser = XMLStreamParser(maximumStanzaBytes: maximumStanzaBytes)
    }

    /// The connection is open: the component speaks first (XEP-0114 §3).
    public mutating func connected() -> [Action] {
        state = .awaitingStream
        let header = "<stream:stream xmlns='\(Self.componentNamespace)' xmlns:stream='\(Self.streamNamespace)' "
            + "to='\(MarkupEscaper.xml.escape(jid))'>"
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

    /// Called every ping interval once ready: a peer that vanished without closing (a crashed
    /// host, a NAT that forgot the connection) would otherwise leave the component "connected"
    /// for ever while every publish is lost. Anything the server sent since the last ping proves
    /// it is there; if nothing came, the stream is over.
    public mutating func pingDue() -> [Action] {
        guard state == .ready else { return [] }
        if unansweredPing != nil { return fail("the XMPP server did not answer a ping (XEP-0199)") }
        pingsSent += 1
        let id = "beckon-ping-\(pingsSent)"
        unansweredPing = id
        // To the server's domain: the component's own address would route back to itself.
        let domain = jid.firstIndex(of: ".").map { String(jid[jid.index(after: $0)...]) } ?? jid
        let ping = XMPPElement(
            name: "iq", namespace: Self.componentNamespace,
            attributes: ["type": "get", "id": id, "from": jid, "to": domain],
            children: [XMPPElement(name: "ping", namespace: "urn:xmpp:ping")])
        return [.send(ping.xml(inherited: Self.componentNamespace))]
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
            unansweredPing = nil
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
