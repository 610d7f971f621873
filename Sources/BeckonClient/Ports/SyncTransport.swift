import Foundation

/// A WebSocket client, reduced to text frames and the close code: `URLSessionWebSocketTask` on
/// Apple platforms (`URLSessionSyncTransport`), a NIO client on Linux (`NIOSyncTransport`), a
/// scripted fake in tests.
public protocol SyncTransport: Sendable {
    /// Opens the socket (`GET /v1/sync` with the device credential and the subprotocol) and
    /// returns once the upgrade succeeded; throws when it did not.
    func connect(to endpoint: SyncEndpoint) async throws -> any SyncTransportConnection
}
