@testable import BeckonServer
import BeckonStore
import Foundation
import Testing

@Suite struct MessageBodyTests {
    /// The accepted-message answer is written by hand; it must be the bytes the API's encoder
    /// gives every other answer (sorted keys, unescaped slashes), whatever the ids hold.
    @Test(arguments: [
        ["alice"], ["bob", "carol/x", "dan \"quoted\"", "émile", "tab\there", "back\\slash"], [],
    ])
    func acceptedMessageIsWhatTheAPIEncoderWrites(users: [String]) {
        for duplicate in [false, true] {
            let message = Message(
                id: "018f3a2b-0000-7000-8000-000000000001", appID: "chat", kind: .message, payload: Data("{}".utf8),
                hints: nil, urgency: .normal, expiresAt: nil, idempotencyKey: nil, createdAt: Date())
            let positions = users.enumerated().map { MailboxPosition(userID: $1, sequence: Int64($0) * 1_000_003 + 1) }
            let body = AcceptedMessageBody(AppendedMessage(message: message, positions: positions, isDuplicate: duplicate))
            #expect(String(decoding: body.json, as: UTF8.self) == String(decoding: APIJSON.encode(body), as: UTF8.self))
        }
    }
}
