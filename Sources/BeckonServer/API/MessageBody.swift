import BeckonJSON
import BeckonStore
import Foundation

/// The answer to `POST /v1/messages`.
struct AcceptedMessageBody: Encodable {
    struct Position: Encodable {
        var userId: String
        var sequence: Int64
    }

    var id: String
    /// True when the idempotency key was seen before: nothing new was stored.
    var duplicate: Bool
    var positions: [Position]

    init(_ appended: AppendedMessage) {
        id = appended.message.id
        duplicate = appended.isDuplicate
        positions = appended.positions.map { Position(userId: $0.userID, sequence: $0.sequence) }
    }

    /// The same bytes as `APIJSON.encode(self)` (keys sorted), written directly: this is the
    /// answer to every post, and Foundation's `JSONEncoder` made it 2% of a node's time at 64
    /// connections. `MessageBodyTests` holds the two equal.
    var json: [UInt8] {
        var writer = JSONWriter()
        writer.beginObject()
        writer.member("duplicate", duplicate)
        writer.member("id", id)
        writer.key("positions")
        writer.beginArray()
        for position in positions {
            writer.beginObject()
            writer.member("sequence", Int(position.sequence))
            writer.member("userId", position.userId)
            writer.endObject()
        }
        writer.endArray()
        writer.endObject()
        return writer.bytes
    }
}

/// A message in a user's mailbox, as `GET /v1/messages/{messageId}` shows it.
struct MailboxMessageBody: Encodable {
    struct Notification: Encodable {
        var title, subtitle, body, titleLocKey, locKey, threadId, category, sound: String?
        var titleLocArgs, locArgs: [String]?
    }

    var id: String
    var userId: String
    var sequence: Int64
    var kind: String
    var payload: JSONValue?
    var notification: Notification?
    var urgency: String
    var expiresAt: String?
    var createdAt: String

    init(_ entry: MailboxEntry) {
        let message = entry.message
        id = message.id
        userId = entry.userID
        sequence = entry.sequence
        kind = message.kind.rawValue
        // Stored by POST /v1/messages as JSON; an empty payload was none.
        payload = message.payload.isEmpty ? nil : try? APIJSON.parse(message.payload)
        notification = message.hints.map {
            Notification(
                title: $0.title, subtitle: $0.subtitle, body: $0.body, titleLocKey: $0.titleLocKey, locKey: $0.locKey,
                threadId: $0.threadID, category: $0.category, sound: $0.sound,
                titleLocArgs: $0.titleLocArgs, locArgs: $0.locArgs)
        }
        urgency = message.urgency.rawValue
        expiresAt = message.expiresAt.map(APIJSON.timestamp)
        createdAt = APIJSON.timestamp(message.createdAt)
    }
}
