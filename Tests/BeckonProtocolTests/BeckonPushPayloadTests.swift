import BeckonJSON
import BeckonProtocol
import Testing

@Suite struct BeckonPushPayloadTests {
    @Test func whatTheServerWritesTheAppReads() throws {
        let hints = NotificationHints(title: "Anna", locKey: "CALL", locArgs: ["Anna"], threadID: "t")
        let payload = BeckonPushPayload(
            reason: .callVoIP, ids: ["c1"], clear: ["m0"], badge: 2, callID: "c1", hints: hints, sealed: "c2VhbGVk")
        // As iOS hands it over: the whole payload, `aps` beside our key.
        let whole = try JSONParser.parse(Array(#"{"aps":{"content-available":1},"beckon":"#.utf8) + payload.json.bytes + [0x7D])
        #expect(BeckonPushPayload(payload: whole) == payload)
    }

    @Test func aPushThatIsNotOursOrFromANewerServerIsIgnored() throws {
        #expect(BeckonPushPayload(payload: try JSONParser.parse(Array(#"{"aps":{"alert":"x"}}"#.utf8))) == nil)
        let future = try JSONParser.parse(Array(#"{"beckon":{"reason":"teleport","ids":["m1"]}}"#.utf8))
        #expect(BeckonPushPayload(payload: future) == nil)
    }
}
