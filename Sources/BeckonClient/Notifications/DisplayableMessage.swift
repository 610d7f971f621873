import BeckonJSON
import BeckonProtocol
import Foundation

/// A message the app is asked to describe in a notification: synced (no hints; the payload is
/// the app's own JSON) or fetched by the extension (with the operator's hints, if any).
public struct DisplayableMessage: Hashable, Sendable {
    public var id: String
    public var kind: MessageKind
    public var payload: JSONValue?
    public var hints: NotificationHints?

    public init(id: String, kind: MessageKind, payload: JSONValue?, hints: NotificationHints? = nil) {
        self.id = id
        self.kind = kind
        self.payload = payload
        self.hints = hints
    }
}
