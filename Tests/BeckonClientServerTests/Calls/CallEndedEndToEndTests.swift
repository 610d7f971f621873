import BeckonClient
import BeckonClientTestSupport
import BeckonJSON
import BeckonProtocol
import Foundation
import Testing

/// Rule 6's end of a call, through the real server: `POST /v1/calls/{callId}/end` reaches the
/// callee's connected device as `callEnded`, and the SDK ends the CallKit call.
@Suite(.serialized) struct CallEndedEndToEndTests {
    @Test
    func aCallAnsweredElsewhereEndsInCallKit() async throws {
        try await ClientTestServer.with { server in
            let device = try await ClientTestDevice(server: server, user: "u1", device: "d1")
            defer { device.remove() }
            let callID = try await server.post(to: ["u1"], kind: "call", notification: ["title": "Anna"])
            // The VoIP push rang the phone: CallKit was told.
            let push: JSONValue = ["beckon": ["reason": "call-voip", "call": .string(callID), "ids": .array([.string(callID)])]]
            device.calls.receiveVoIPPush(push) { .incoming($0) }
            #expect(device.reporter.reports.count == 1)

            let writer = try await device.lock.acquire(timeout: .seconds(10))
            let session = device.session(writer: writer)
            await session.start()
            #expect(await session.untilCaughtUp())
            let answer = try await server.request(
                "POST", "/v1/calls/\(callID)/end", bearer: server.chatKey, body: ["outcome": "answered-elsewhere"])
            #expect(answer.status == 200 || answer.status == 202)
            try await eventually("CallKit ended the call") { !device.reporter.ends.isEmpty }
            #expect(device.reporter.ends.first?.outcome == .answeredElsewhere)
            // A VoIP push for it that arrives late is reported and ended at once.
            #expect(device.calls.receiveVoIPPush(push) { .incoming($0) }.kind == .alreadyEnded(.answeredElsewhere))
            await session.stopAndWait()
            await writer.release()
        }
    }
}
