import Foundation

/// A WebSocket client, reduced to text frames and the close code: `URLSessionWebSocketTask` on
/// Apple platforms (`URLSessionSyncTransport`), a NIO client on Linux (`NIOSyncTransport`), a
/// scripted fake in tests.
public protocol SyncTransport: Sendable {
    /// Opens the socket (`GET /v1/sync` with the device credential and the subprotocol) and
    /// returns once the upgrade succeeded; throws when it did not.
    func connect(to endpoint: SyncEndpoint) async throws -> any SyncTransportConnection
}

/// One open WebSocket.
public protocol SyncTransportConnection: Sendable {
    /// Every text message the server sends, then exactly one `.closed`, then the end.
    var events: AsyncStream<SyncTransportEvent> { get }
    func send(_ text: String) async throws
    /// Sends a close frame with `code`; the `.closed` event follows.
    func close(code: UInt16) async
}

public enum SyncTransportEvent: Hashable, Sendable {
    case text(String)
    /// The socket ended: with the server's close code, or nil when it dropped without one.
    case closed(code: UInt16?)
}

/// Where and as whom to connect.
public struct SyncEndpoint: Hashable, Sendable {
    /// `ws(s)://host[:port]/v1/sync`.
    public var url: URL
    /// The device credential (`bkd_…`) from `POST /v1/devices`.
    public var credential: String
    /// `Sec-WebSocket-Protocol`.
    public var subprotocol: String

    public init(url: URL, credential: String, subprotocol: String) {
        self.url = url
        self.credential = credential
        self.subprotocol = subprotocol
    }
}
