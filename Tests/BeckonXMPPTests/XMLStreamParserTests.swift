import BeckonXMPP
import Testing

/// The stream parser on what Prosody really sends (as scripts/xmpp-harness-selftest.py prints it),
/// cut anywhere, and on what RFC 6120 §11.1 forbids.
@Suite struct XMLStreamParserTests {
    static let opening = """
        <?xml version='1.0'?><stream:stream xmlns:stream='http://etherx.jabber.org/streams' \
        xmlns='jabber:component:accept' from='push.localhost' id='f4a1c2'>
        """
    /// Prosody 0.12's publish for an offline message (mod_cloud_notify, default settings).
    static let publish = """
        <iq from='localhost' type='set' to='push.localhost' id='cec3d3'><pubsub xmlns='http://jabber.org/protocol/pubsub'>\
        <publish node='test-node-1'><item><notification xmlns='urn:xmpp:push:0'><x type='form' xmlns='jabber:x:data'>\
        <field type='hidden' var='FORM_TYPE'><value>urn:xmpp:push:summary</value></field>\
        <field type='text-single' var='message-count'><value>1</value></field>\
        <field type='text-single' var='pending-subscription-count'/>\
        <field type='text-single' var='last-message-body'><value>Hello &lt;&amp;&gt; &#x1F600;</value></field></x>\
        </notification></item></publish><publish-options><x type='submit' xmlns='jabber:x:data'>\
        <field var='FORM_TYPE'><value>http://jabber.org/protocol/pubsub#publish-options</value></field>\
        <field var='secret'><value>s3cret</value></field></x></publish-options></pubsub></iq>
        """

    @Test func aPublishCutAtEveryByteGivesTheSameStanza() throws {
        let whole = Array((Self.opening + " " + Self.publish + "</stream:stream>").utf8)
        var reference = XMLStreamParser()
        let expected = try reference.feed(whole)
        #expect(expected.count == 3)
        guard case .streamOpened(let root) = expected[0], case .stanza(let iq) = expected[1] else {
            Issue.record("\(expected)")
            return
        }
        #expect(root["id"] == "f4a1c2")
        #expect(iq.name == "iq" && iq.namespace == "jabber:component:accept" && iq["type"] == "set")
        let pubsub = try #require(iq.child("pubsub", namespace: "http://jabber.org/protocol/pubsub"))
        #expect(pubsub.child("publish")?["node"] == "test-node-1")
        let summary = try #require(pubsub.child("publish")?.child("item")?.child("notification", namespace: "urn:xmpp:push:0")?.child("x"))
        #expect(summary.namespace == "jabber:x:data")
        let body = summary.children("field").first { $0["var"] == "last-message-body" }
        #expect(body?.child("value")?.text == "Hello <&> 😀")
        let secret = pubsub.child("publish-options")?.child("x")?.children("field").first { $0["var"] == "secret" }
        #expect(secret?.child("value")?.text == "s3cret")
        #expect(expected[2] == .streamClosed)

        for cut in 1..<whole.count {
            var parser = XMLStreamParser()
            let events = try parser.feed(whole[..<cut]) + parser.feed(whole[cut...])
            #expect(events == expected, "cut at \(cut)")
        }
    }

    @Test func whatRFC6120ForbidsIsRefused() throws {
        for forbidden in ["<!-- a comment -->", "<?php x ?>", "<!DOCTYPE x>", "<iq>&custom;</iq>", "<iq a=1/>", "<p:iq/>",
                          "<iq></message>", "stray text<iq/>", "<iq>&#0;</iq>", "<iq>&#+65;</iq>", "<iq>\u{1}</iq>",
                          "<iq a='1'b='2'/>", "<iq a='x<y'/>", "<iq><![CDATA[x]]></iq><![CDATA[y]]>"] {
            var parser = XMLStreamParser()
            _ = try parser.feed(Array(Self.opening.utf8))
            #expect(throws: XMLStreamParser.ParseError.self, "\(forbidden)") { try parser.feed(Array(forbidden.utf8)) }
        }
    }

    @Test func aStanzaPastTheLimitIsAnErrorNotAGrowingBuffer() throws {
        var parser = XMLStreamParser(maximumStanzaBytes: 1024)
        _ = try parser.feed(Array(Self.opening.utf8))
        #expect(try parser.feed(Array("<message><body>short</body></message>".utf8)).count == 1)
        _ = try parser.feed(Array("<message><body>".utf8))
        #expect(throws: XMLStreamParser.ParseError.self) {
            for _ in 0..<20 { _ = try parser.feed(Array(String(repeating: "x", count: 100).utf8) + Array("<b/>".utf8)) }
        }
        var unterminated = XMLStreamParser(maximumStanzaBytes: 1024)
        _ = try unterminated.feed(Array(Self.opening.utf8))
        #expect(throws: XMLStreamParser.ParseError.self) {
            try unterminated.feed(Array(("<iq a='" + String(repeating: "y", count: 2000)).utf8))
        }
    }

    @Test func whitespaceKeepAlivesBetweenStanzasAreFine() throws {
        var parser = XMLStreamParser()
        _ = try parser.feed(Array(Self.opening.utf8))
        #expect(try parser.feed(Array(" \n ".utf8)).isEmpty)
        #expect(try parser.feed(Array("<handshake/>".utf8)) == [.stanza(.init(name: "handshake", namespace: "jabber:component:accept"))])
    }

    /// CDATA is taken whole, quotes and `>` in it included, and does not swallow what follows.
    @Test func cdataHoldsQuotesAndAngleBrackets() throws {
        var parser = XMLStreamParser()
        _ = try parser.feed(Array(Self.opening.utf8))
        let events = try parser.feed(Array("<message><body><![CDATA[it's a > b]]></body></message><iq type='get' id='1'/>".utf8))
        #expect(events.count == 2)
        guard case .stanza(let message)? = events.first else { Issue.record("\(events)"); return }
        #expect(message.child("body")?.text == "it's a > b")
    }

    @Test func theRootMustBeAStreamAndStanzasNotTooDeep() throws {
        var wrongRoot = XMLStreamParser()
        #expect(throws: XMLStreamParser.ParseError.self) {
            try wrongRoot.feed(Array("<stream:stream xmlns:stream='urn:not-streams'>".utf8))
        }
        var deep = XMLStreamParser(maximumDepth: 8)
        _ = try deep.feed(Array(Self.opening.utf8))
        #expect(throws: XMLStreamParser.ParseError.self) {
            try deep.feed(Array((String(repeating: "<a>", count: 9) + String(repeating: "</a>", count: 9)).utf8))
        }
        // A stanza whose last tag takes it past the limit is refused, however it arrives.
        var limited = XMLStreamParser(maximumStanzaBytes: 64)
        _ = try limited.feed(Array(Self.opening.utf8))
        #expect(throws: XMLStreamParser.ParseError.self) {
            try limited.feed(Array("<iq a='\(String(repeating: "z", count: 80))'/>".utf8))
        }
    }
}
