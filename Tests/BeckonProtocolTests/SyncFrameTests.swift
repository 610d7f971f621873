import BeckonJSON
import BeckonProtocol
import Foundation
import Testing

/// What one side writes, the other reads back the same: the server and the SDK share these types.
@Suite struct SyncFrameTests {
    @Test func clientFramesRoundTrip() {
        let frames: [SyncClientFrame] = [
            .hello(version: 2, role: .extension, cursor: 41, window: 10),
            .hello(version: 2, role: .app, cursor: 0, window: nil),
            .ack(upTo: 7), .read(ids: ["a", "b"]), .ping(id: .object(["n": 1])), .ping(id: nil), .bye,
            .receipts([
                SyncReceipt(messageID: "m1", kind: .shown, at: Date(timeIntervalSince1970: 1.25)),
                SyncReceipt(messageID: "m2", kind: .opened, at: Date(timeIntervalSince1970: 2)),
            ]),
        ]
        for frame in frames {
            #expect(SyncClientFrame.parse(frame.text) == .success(frame), "\(frame.text)")
        }
    }

    @Test func serverFramesRoundTrip() {
        let message = SyncMessage(
            sequence: 3, id: "m3", kind: .call, payload: Array(#"{"text":"hi"}"#.utf8),
            createdAt: Date(timeIntervalSince1970: 1.5), expiresAt: Date(timeIntervalSince1970: 9), read: true)
        let frames: [SyncServerFrame] = [
            .welcome(version: 2, sessionID: "s", lastSequence: 9, window: 100, badge: 4),
            .welcome(version: 2, sessionID: "s", lastSequence: 9, window: 100, badge: 4, features: ["receipts"]),
            .message(message), .readElsewhere(ids: ["m1"], badge: 0),
            .callEnded(callID: "c1", outcome: .answeredElsewhere), .pong(id: .string("p")),
            .error(code: .ackBeyondSent, message: "upTo: too far"),
        ]
        for frame in frames {
            #expect(SyncServerFrame.parse(frame.text) == .success(frame), "\(frame.text)")
        }
    }

    @Test func aMessageFrameSplicesThePayloadAsItIs() throws {
        let frame = SyncServerFrame.message(SyncMessage(
            sequence: 1, id: "m1", kind: .message, payload: Array(#"{"b":1,"a":[true]}"#.utf8),
            createdAt: Date(timeIntervalSince1970: 0)))
        #expect(frame.text == #"{"createdAt":0,"id":"m1","kind":"message","payload":{"b":1,"a":[true]},"read":false,"seq":1,"type":"message"}"#)
        let empty = SyncServerFrame.message(SyncMessage(
            sequence: 2, id: "m2", kind: .receipt, payload: [], createdAt: Date(timeIntervalSince1970: 0)))
        #expect(try JSONParser.parse(Array(empty.text.utf8))["payload"] == .null)
    }

    @Test func violationsNameTheRule() {
        #expect(SyncClientFrame.parse("[1]") == .failure(SyncFrameError(.malformedFrame, "a frame is one JSON object")))
        #expect(SyncClientFrame.parse(#"{"type":"hello","version":2,"cursor":0,"role":"widget"}"#)
            == .failure(SyncFrameError(.invalidField, "role: not a known value")))
        #expect(SyncClientFrame.parse(#"{"type":"read","ids":[""]}"#)
            == .failure(SyncFrameError(.invalidField, "ids: each must be a message id string")))
        let tooMany = "[" + Array(repeating: #""x""#, count: SyncProtocol.maximumReadIDs + 1).joined(separator: ",") + "]"
        #expect(SyncClientFrame.parse(#"{"type":"read","ids":\#(tooMany)}"#)
            == .failure(SyncFrameError(.invalidField, "ids: at most 1000 per frame")))
        // A receipt of a kind this version does not know is skipped (a newer client reports more);
        // a malformed one is refused.
        #expect(SyncClientFrame.parse(#"{"type":"receipts","items":[{"id":"M1","kind":"seen-on-watch","at":1},{"id":"m2","kind":"shown","at":2000}]}"#)
            == .success(.receipts([SyncReceipt(messageID: "m2", kind: .shown, at: Date(timeIntervalSince1970: 2))])))
        #expect(SyncClientFrame.parse(#"{"type":"receipts","items":[{"id":"m1","kind":"shown"}]}"#)
            == .failure(SyncFrameError(.invalidField, "items: each must be {id, kind, at}, at in milliseconds")))
        // Ids are case-insensitive UUIDs: the server stores them lowercased.
        #expect(SyncClientFrame.parse(#"{"type":"read","ids":["AB"]}"#) == .success(.read(ids: ["ab"])))
    }

    @Test func onlyCloseCodesThatInviteItAllowAReconnect() {
        #expect(SyncCloseCode.goingAway.allowsReconnect)
        #expect(SyncCloseCode.replaced.allowsReconnect)
        #expect(!SyncCloseCode.preempted.allowsReconnect, "the app holds the device: the extension stops")
        #expect(!SyncCloseCode.revoked.allowsReconnect)
    }
}
