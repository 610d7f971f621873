// Apple platforms: URLSessionWebSocketTask (on Linux the NIO transport, BeckonClientNIO, is
// used instead). A translation, no decisions (docs/client-sdk.md).
#if canImport(Darwin) || BECKON_APPLE_SDK_STANDIN
import BeckonClient
import BeckonProtocol
import Foundation

/// `SyncTransport` over `URLSessionWebSocketTask`.
public struct URLSessionSyncTransport: SyncTransport {
    let session: URLSession
    /// The largest frame read: the server sends up to its `limits.payload-bytes` plus 4 KiB
    /// (docs/sync-protocol.md); URLSession's default is 1 MiB.
    let maximumMessageSize: Int

    public init(session: URLSession = .shared, maximumMessageSize: Int = 4 << 20) {
        self.session = session
        self.maximumMessageSize = maximumMessageSize
    }

    public func connect(to endpoint: SyncEndpoint) async throws -> any SyncTransportConnection {
        var request = URLRequest(url: endpoint.url)
        request.setValue("Bearer \(endpoint.credential)", forHTTPHeaderField: "Authorization")
        request.setValue(endpoint.subprotocol, forHTTPHeaderField: "Sec-WebSocket-Protocol")
        let task = session.webSocketTask(with: request)
        task.maximumMessageSize = maximumMessageSize
        let connection = URLSessionSyncConnection(task: task)
        task.delegate = connection
        return try await withTaskCancellationHandler {
            try await connection.open()
        } onCancel: {
            task.cancel()
        }
    }
}

final class URLSessionSyncConnection: NSObject, SyncTransportConnection, URLSessionWebSocketDelegate, @unchecked Sendable {
    let task: URLSessionWebSocketTask
    let events: AsyncStream<SyncTransportEvent>
    private let continuation: AsyncStream<SyncTransportEvent>.Continuation
    private let lock = NSLock()
    private var opening: CheckedContinuation<any SyncTransportConnection, any Error>?
    private var opened = false
    private var ended = false

    init(task: URLSessionWebSocketTask) {
        self.task = task
        (events, continuation) = AsyncStream.makeStream(of: SyncTransportEvent.self)
    }

    func open() async throws -> any SyncTransportConnection {
        try await withCheckedThrowingContinuation { continuation in
            lock.lock()
            // Cancelled before this ran: the task's completion may have come and gone already.
            guard !ended else {
                lock.unlock()
                continuation.resume(throwing: CancellationError())
                return
            }
            opening = continuation
            lock.unlock()
            task.resume()
        }
    }

    func send(_ text: String) async throws {
        try await task.send(.string(text))
    }

    func close(code: UInt16) async {
        task.cancel(with: URLSessionWebSocketTask.CloseCode(rawValue: Int(code)) ?? .normalClosure, reason: nil)
    }

    func urlSession(_ session: URLSession, webSocketTask: URLSessionWebSocketTask, didOpenWithProtocol protocol: String?) {
        lock.lock()
        let waiter = opening
        opening = nil
        opened = true
        lock.unlock()
        waiter?.resume(returning: self)
        receive()
    }

    func urlSession(
        _ session: URLSession, webSocketTask: URLSessionWebSocketTask,
        didCloseWith closeCode: URLSessionWebSocketTask.CloseCode, reason: Data?
    ) {
        finish(code: Self.code(closeCode, reason: reason))
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
        lock.lock()
        let waiter = opening
        opening = nil
        lock.unlock()
        waiter?.resume(throwing: error ?? URLError(.cannotConnectToHost))
        finish(code: nil)
    }

    private func receive() {
        task.receive { [weak self] result in
            guard let self else { return }
            switch result {
            case .success(.string(let text)):
                self.continuation.yield(.text(text))
                self.receive()
            case .success:
                // Binary messages are not part of the protocol.
                self.receive()
            case .failure:
                // The close (or the failure) is reported by the delegate.
                break
            }
        }
    }

    private func finish(code: UInt16?) {
        lock.lock()
        let first = !ended
        ended = true
        lock.unlock()
        guard first else { return }
        continuation.yield(.closed(code: code))
        continuation.finish()
    }

    /// The close code as a number. Beckon's own codes (4001–4029) are outside the cases of
    /// `CloseCode`; the raw value carries them. If a platform reported them as `.invalid`, the
    /// server's close reason names them (docs/sync-protocol.md, "Closing").
    static func code(_ closeCode: URLSessionWebSocketTask.CloseCode, reason: Data?) -> UInt16? {
        if closeCode.rawValue > 0 { return UInt16(clamping: closeCode.rawValue) }
        let text = reason.map { String(decoding: $0, as: UTF8.self).lowercased() } ?? ""
        if text.hasPrefix("preempted") { return SyncCloseCode.preempted.rawValue }
        if text.hasPrefix("revoked") { return SyncCloseCode.revoked.rawValue }
        if text.hasPrefix("replaced") { return SyncCloseCode.replaced.rawValue }
        return nil
    }
}
#endif
