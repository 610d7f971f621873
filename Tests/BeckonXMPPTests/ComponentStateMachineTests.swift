import BeckonXMPP
import Testing

/// The component's side of XEP-0114 and of XEP-0357 publishes, without a socket.
@Suite struct ComponentStateMachineTests {
    static let header = """
        <?xml version='1.0'?><stream:stream xmlns:stream='http://etherx.jabber.org/streams' \
        xmlns='jabber:component:accept' id='3BF96D32' from='push.localhost'>
        """

    /// Lowercase hex SHA-1 of the stream id and the secret (XEP-0114 §3), as Python's hashlib
    /// computes it for the same input.
    @Test func theHandshakeIsTheHexSHA1OfIdAndSecret() {
        #expect(ComponentStateMachine.handshake(streamID: "3BF96D32", secret: "sesame") == "7a98dc4c9e92493d7fd66a25364c862637789c45")
    }

    @Test func opensHandshakesAndTurnsPublishesIntoActions() throws {
        var machine = ComponentStateMachine(jid: "push.localhost", secret: "s3cret")
        let opening = machine.connected()
        guard case .send(let header)? = opening.first else { Issue.record("\(opening)"); return }
        #expect(header.contains("xmlns='jabber:component:accept'") && header.contains("to='push.localhost'"))

        let handshake = machine.received(Array(Self.header.utf8))
        #expect(handshake == [.send("<handshake>\(ComponentStateMachine.handshake(streamID: "3BF96D32", secret: "s3cret"))</handshake>")])
        #expect(machine.received(Array("<handshake/>".utf8)) == [.ready])
        #expect(machine.state == .ready)

        let publish = """
            <iq from='localhost' type='set' to='push.localhost' id='p1'><pubsub xmlns='http://jabber.org/protocol/pubsub'>\
            <publish node='xmpp-abc'><item><notification xmlns='urn:xmpp:push:0'><x type='form' xmlns='jabber:x:data'>\
            <field type='hidden' var='FORM_TYPE'><value>urn:xmpp:push:summary</value></field>\
            <field var='message-count'><value>1</value></field><field var='pending-subscription-count'/>\
            <field var='last-message-body'><value>New Message!</value></field></x></notification></item></publish>\
            <publish-options><x type='submit' xmlns='jabber:x:data'><field var='FORM_TYPE'>\
            <value>http://jabber.org/protocol/pubsub#publish-options</value></field>\
            <field var='secret'><value>abc-secret</value></field></x></publish-options></pubsub></iq>
            """
        let actions = machine.received(Array(publish.utf8))
        guard case .publish(let taken)? = actions.first else { Issue.record("\(actions)"); return }
        #expect(taken.node == "xmpp-abc" && taken.secret == "abc-secret" && taken.id == "p1" && taken.from == "localhost")
        #expect(taken.summary == ["message-count": "1", "last-message-body": "New Message!"])
        #expect(taken.result(from: "push.localhost").xml(inherited: ComponentStateMachine.componentNamespace)
            == "<iq from='push.localhost' id='p1' to='localhost' type='result'/>")
        let error = taken.error(from: "push.localhost", type: "cancel", condition: "item-not-found")
            .xml(inherited: ComponentStateMachine.componentNamespace)
        #expect(error.contains("<error type='cancel'><item-not-found xmlns='urn:ietf:params:xml:ns:xmpp-stanzas'/></error>"))

        // Another request gets an error; a message needs no answer.
        let disco = machine.received(Array("<iq type='get' id='d1' from='localhost'><query xmlns='http://jabber.org/protocol/disco#info'/></iq>".utf8))
        guard case .send(let refusal)? = disco.first else { Issue.record("\(disco)"); return }
        #expect(refusal.contains("type='error'") && refusal.contains("service-unavailable") && refusal.contains("id='d1'"))
        #expect(machine.received(Array("<message from='a@localhost'><body>hi</body></message>".utf8)).isEmpty)
    }

    @Test func aStreamErrorOrBadXMLEndsTheStream() {
        var refused = ComponentStateMachine(jid: "push.localhost", secret: "wrong")
        _ = refused.connected()
        _ = refused.received(Array(Self.header.utf8))
        let actions = refused.received(Array(
            "<stream:error><not-authorized xmlns='urn:ietf:params:xml:ns:xmpp-streams'/></stream:error>".utf8))
        #expect(actions.last == .fail("stream error: not-authorized"))
        #expect(refused.state == .closed)
        #expect(refused.received(Array("<handshake/>".utf8)).isEmpty, "nothing after the end")

        var garbled = ComponentStateMachine(jid: "push.localhost", secret: "s")
        _ = garbled.connected()
        _ = garbled.received(Array(Self.header.utf8))
        #expect(garbled.received(Array("<!-- no -->".utf8)).contains { if case .fail = $0 { true } else { false } })
    }

    /// A server that vanished without closing is noticed: a ping each interval, and a second one
    /// due with nothing received since the first ends the stream.
    @Test func aSilentServerIsNoticedByPings() {
        var machine = ComponentStateMachine(jid: "push.localhost", secret: "s")
        #expect(machine.pingDue().isEmpty, "no ping before the handshake")
        _ = machine.connected()
        _ = machine.received(Array(Self.header.utf8))
        _ = machine.received(Array("<handshake/>".utf8))
        guard case .send(let ping)? = machine.pingDue().first else { Issue.record("no ping"); return }
        #expect(ping.contains("to='localhost'") && ping.contains("<ping xmlns='urn:xmpp:ping'/>"))
        _ = machine.received(Array("<iq type='result' id='beckon-ping-1' from='localhost' to='push.localhost'/>".utf8))
        #expect(machine.pingDue().count == 1, "answered: the next ping goes out")
        #expect(machine.pingDue().last == .fail("the XMPP server did not answer a ping (XEP-0199)"))
        #expect(machine.state == .closed)
    }
}
