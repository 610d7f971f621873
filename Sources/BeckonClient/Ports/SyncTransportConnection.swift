/// One open WebSocket.
public protocol SyncTransportConnection: Sendable {
    /// Every text message the server sends, then exactly one `.closed`, then the end.
    var events: AsyncStream<SyncTransportEvent> { get }
    func send(_ text: String) async throws
    /// Sends a close frame with `code`; the `.closed` event follows.
    func close(code: UInt16) async
}
