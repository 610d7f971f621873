import BeckonJSON
import BeckonProtocol
import Foundation

/// A message as the device keeps it.
public struct StoredMessage: Hashable, Sendable {
    /// The message's id, as the backend posted it.
    public var id: String
    /// Its place in the user's mailbox: messages sort by it.
    public var sequence: Int64
    /// A message, a call, or another kind the backend posts.
    public var kind: MessageKind
    /// The backend's JSON, as received.
    public var payload: [UInt8]
    /// When the server accepted it.
    public var createdAt: Date
    /// When it stops mattering (a call's ring), if ever.
    public var expiresAt: Date?
    /// Read here or on another of the user's devices.
    public var isRead: Bool
    /// Arrived over sync (false: only the extension fetched it so far).
    public var synced: Bool

    /// The payload parsed; nil when there is none.
    public var payloadJSON: JSONValue? { payload.isEmpty ? nil : try? JSONParser.parse(payload) }
}
