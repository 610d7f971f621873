import BeckonJSON
import BeckonProtocol
import Foundation

/// A message as the device keeps it.
public struct StoredMessage: Hashable, Sendable {
    public var id: String
    public var sequence: Int64
    public var kind: MessageKind
    /// The backend's JSON, as received.
    public var payload: [UInt8]
    public var createdAt: Date
    public var expiresAt: Date?
    public var isRead: Bool
    /// Arrived over sync (false: only the extension fetched it so far).
    public var synced: Bool

    /// The payload parsed; nil when there is none.
    public var payloadJSON: JSONValue? { payload.isEmpty ? nil : try? JSONParser.parse(payload) }
}
